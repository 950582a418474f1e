package harness_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// TestRun_StallResumesTheSession: the API accepts the first request and goes
// silent after message_start; with a 3 s idle limit the attempt ends as a
// stall (an event says so), and the second attempt resumes the same session
// and succeeds, long before the CLI's own request timeout. Control: with
// the idle limit off, the same stall holds the step until its context ends.
func TestRun_StallResumesTheSession(t *testing.T) {
	t.Parallel()
	for _, limit := range []bool{true, false} {
		t.Run(map[bool]string{true: "idle limit", false: "control"}[limit], func(t *testing.T) {
			t.Parallel()
			b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main",
				Replies: []scripted.Reply{{Fault: &scripted.Fault{Stall: true}}, {Text: "AFTER_STALL"}}}}})
			rt := newRuntime(t, b, func(o *harness.Options) {
				o.Resilience.IdleTimeout = map[bool]time.Duration{true: 3 * time.Second, false: -1}[limit]
			})
			ctx, cancel := context.WithTimeout(t.Context(), map[bool]time.Duration{true: 2 * time.Minute, false: 20 * time.Second}[limit])
			defer cancel()
			start := time.Now()
			res, err := rt.Run(ctx, harness.NewAgentSpec("plain", "x"), "answer after the stall", harness.RunOptions{StepName: "stall"})
			if err != nil {
				t.Fatal(err)
			}
			if !limit {
				if res.OK || ctx.Err() == nil {
					t.Fatalf("control: the stall did not hold the step: %+v", res)
				}
				return
			}
			if !res.OK || res.Text != "AFTER_STALL" || res.Attempts != 2 {
				t.Fatalf("result = %+v", res)
			}
			if d := time.Since(start); d > 90*time.Second {
				t.Errorf("the stall took %s to end", d)
			}
			reqs := b.Model.RequestsFor("main")
			if len(reqs) != 2 || sessionOf(reqs[0]) != sessionOf(reqs[1]) || !strings.Contains(reqs[1].Messages().Raw, "answer after the stall") {
				t.Fatalf("want the stalled session resumed: %d requests", len(reqs))
			}
			stalls := 0
			for _, e := range readEvents(t, rt.EventsPath()) {
				if st, ok := e.Stall(); ok && st.IdleS == 3 && st.SessionID == res.SessionID {
					stalls++
				}
			}
			if stalls != 1 {
				t.Errorf("%d stall events, want 1", stalls)
			}
		})
	}
}

// TestRun_DripIsAStall: an API that accepts the request and then sends a
// keep-alive ping each second and never any content (scripted drip) is a
// stall under a 3 s idle limit, though claude prints a line per ping: the
// attempt ends as a stall and the next resumes the same session and
// succeeds. (The pure control, content each second is progress, is
// TestMachine_PingsAreNoProgress.)
func TestRun_DripIsAStall(t *testing.T) {
	t.Parallel()
	b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main",
		Replies: []scripted.Reply{{Fault: &scripted.Fault{Drip: true}}, {Text: "AFTER_DRIP"}}}}})
	rt := newRuntime(t, b, func(o *harness.Options) { o.Resilience.IdleTimeout = 3 * time.Second })
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	res, err := rt.Run(ctx, harness.NewAgentSpec("plain", "x"), "answer after the drip", harness.RunOptions{StepName: "drip"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Text != "AFTER_DRIP" || res.Attempts != 2 {
		t.Fatalf("result = %+v", res)
	}
	reqs := b.Model.RequestsFor("main")
	if len(reqs) != 2 || sessionOf(reqs[0]) != sessionOf(reqs[1]) {
		t.Fatalf("want the dripping session resumed: %d requests", len(reqs))
	}
}

// TestRun_SlowToolIsNoStall: a Bash call that runs twice the idle limit
// (sleep 6 under a 3 s limit) is not a stall: one attempt, ok. The tool
// does run (its marker is there), so the limit was suspended, not idle.
func TestRun_SlowToolIsNoStall(t *testing.T) {
	t.Parallel()
	b := testbed.NewFor(t, func(ws string) *scripted.Script {
		in, _ := json.Marshal(map[string]string{"command": "sleep 6; touch " + filepath.Join(ws, "SLOW_DONE"), "description": "slow"})
		return &scripted.Script{Conversations: []scripted.Conversation{{Name: "main",
			Replies: []scripted.Reply{{ToolUse: &scripted.Block{Name: "Bash", Input: in}}, {Text: "SLOW_OK"}}}}}
	})
	rt := newRuntime(t, b, func(o *harness.Options) { o.Resilience.IdleTimeout = 3 * time.Second })
	spec := harness.NewAgentSpec("plain", "x")
	spec.AllowedTools = []string{"Bash"}
	res, err := rt.Run(runCtx(t), spec, "run the slow tool", harness.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Text != "SLOW_OK" || res.Attempts != 1 {
		t.Fatalf("result = %+v", res)
	}
	if !testbed.Eventually(time.Second, func() bool { return fileExists(filepath.Join(b.Workspace, "SLOW_DONE")) }) {
		t.Error("the slow tool did not finish")
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// TestRun_BackgroundShellDoesNotHoldTheStep: a Bash call the model starts
// with run_in_background (sleep 15, then a marker) does not hold the step:
// the result stands after the result grace, the model gets no turn after
// the shell (the CLI itself would wait for it and take one, whose text
// would be the step's), and the shell dies with the step: no process that
// would touch the marker is left (awaited, not slept past its 15 s; the
// marker itself proved nothing once a loaded machine ran the step longer
// than the shell's sleep).
func TestRun_BackgroundShellDoesNotHoldTheStep(t *testing.T) {
	t.Parallel()
	var marker string
	b := testbed.NewFor(t, func(ws string) *scripted.Script {
		marker = filepath.Join(ws, "LATE")
		in, _ := json.Marshal(map[string]any{"command": "sleep 15; touch " + marker, "description": "a server", "run_in_background": true})
		return &scripted.Script{Conversations: []scripted.Conversation{{Name: "main",
			Replies: []scripted.Reply{{ToolUse: &scripted.Block{Name: "Bash", Input: in}}, {Text: "BG_STARTED"}},
			Func:    func(scripted.Request) scripted.Reply { return scripted.Reply{Text: "AFTER_THE_SHELL"} }}}}
	})
	rt := newRuntime(t, b, nil)
	spec := harness.NewAgentSpec("plain", "x")
	spec.AllowedTools = []string{"Bash"}
	// While the step runs, look for the shell by its command line (it
	// names the marker): seeing it is the control that the look below,
	// once the step is over, would find a shell that outlived it.
	var seen atomic.Bool
	stopLooking := make(chan struct{})
	go func() {
		for !seen.Load() {
			select {
			case <-stopLooking:
				return
			case <-time.After(20 * time.Millisecond):
				seen.Store(len(testbed.Mentioning(marker)) > 0)
			}
		}
	}()
	res, err := rt.Run(runCtx(t), spec, "start the server", harness.RunOptions{})
	close(stopLooking)
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Text != "BG_STARTED" || res.Attempts != 1 {
		t.Fatalf("result = %+v", res)
	}
	if n := len(b.Model.RequestsFor("main")); n != 2 {
		t.Errorf("the model got %d requests, want 2 (no turn after the shell)", n)
	}
	if !seen.Load() {
		t.Fatal("control: the background shell was never seen running (testbed.Mentioning cannot find it)")
	}
	if !testbed.Eventually(10*time.Second, func() bool { return len(testbed.Mentioning(marker)) == 0 }) {
		t.Fatalf("the background shell outlived the step: %v", testbed.Mentioning(marker))
	}
}
