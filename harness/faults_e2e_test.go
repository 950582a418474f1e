package harness_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// faultRecipe is a recipe of scripts/record-faults.sh: its first reply (the
// fault) and its "# env:" settings, plus what claude printed when it was
// recorded (testdata/faults/<name>.jsonl).
type faultRecipe struct {
	fault    scripted.Reply
	env      []string
	recorded string // the recorded result text
}

func loadFaultRecipe(t *testing.T, name string) faultRecipe {
	t.Helper()
	root := testbed.RepoRoot(t)
	path := filepath.Join(root, "scripts", "faults", name+".yaml")
	sc, err := scripted.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	src, _ := os.ReadFile(path)
	rec, err := os.ReadFile(filepath.Join(root, "testdata", "faults", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	r := faultRecipe{fault: sc.Conversations[0].Replies[0]}
	for _, l := range strings.Split(string(src), "\n") {
		if v, ok := strings.CutPrefix(l, "# env: "); ok {
			r.env = strings.Fields(v)
		}
	}
	for _, l := range strings.Split(string(rec), "\n") {
		if gjson.Get(l, "type").String() == "result" {
			r.recorded = gjson.Get(l, "result").String()
			if errs := gjson.Get(l, "errors").Array(); len(errs) > 0 {
				r.recorded = errs[0].String()
			}
		}
	}
	return r
}

// samePrefix compares the start of two error texts (timings and ports
// further on differ from run to run).
func samePrefix(a, b string) bool {
	n := min(32, len(a), len(b))
	return n > 0 && a[:n] == b[:n]
}

// TestRun_RecordedTransientFaults: every fault Classify retries, scripted
// from its recording's recipe, fails exactly one attempt on the real claude
// the way the recording says, and the next attempt resumes the same
// session; after the last fault a good reply ends the step ok. The faults
// run as two chains (one step each, in parallel) so that each costs one
// claude process, not two.
func TestRun_RecordedTransientFaults(t *testing.T) {
	t.Parallel()
	var names []string
	for _, name := range harness.TransientRecordedFaults() {
		if name != "refused" { // no server to script: TestRun_OfflineThenBack
			names = append(names, name)
		}
	}
	half := (len(names) + 1) / 2
	for i, chain := range [][]string{names[:half], names[half:]} {
		t.Run(fmt.Sprintf("chain-%d", i+1), func(t *testing.T) {
			t.Parallel()
			var replies []scripted.Reply
			var env []string
			recorded := make([]string, len(chain))
			for k, name := range chain {
				rc := loadFaultRecipe(t, name)
				recorded[k] = rc.recorded
				env = append(env, rc.env...)
				replies = append(replies, rc.fault)
				if f := rc.fault.Fault; f.Stall || f.Drop && f.DropAt != "headers" {
					// Once the stream has started, claude retries the
					// request without streaming inside the same attempt:
					// that request meets the fault too.
					replies = append(replies, rc.fault)
				}
			}
			replies = append(replies, scripted.Reply{Text: "RECOVERED"})
			b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main", Replies: replies}}})
			rt := newRuntime(t, b, func(o *harness.Options) {
				o.Env = append(o.Env, env...)
				o.Resilience.MaxAttempts = len(chain) + 1
			})
			// Up to seven claude processes in a row: more time than runCtx.
			ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
			defer cancel()
			res, err := rt.Run(ctx, harness.NewAgentSpec("plain", "x"), "go on", harness.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for k, name := range chain {
				if k >= len(res.Errors) || !samePrefix(res.Errors[k], recorded[k]) {
					t.Errorf("attempt %d (%s) failed with %q; the recording says %q", k+1, name, res.Errors[min(k, len(res.Errors)-1):], recorded[k])
				}
			}
			if !res.OK || res.Text != "RECOVERED" || res.Attempts != len(chain)+1 || !res.Resumed || res.SessionID == "" {
				t.Fatalf("want ok, RECOVERED, %d attempts, resumed: %+v", len(chain)+1, res)
			}
			sessions := map[string]bool{}
			for _, r := range b.Model.Requests() {
				if id := sessionOf(r); id != "" {
					sessions[id] = true
				}
			}
			if len(sessions) != 1 {
				t.Errorf("requests came from %d sessions, want 1", len(sessions))
			}
		})
	}
}

// forwardOn listens on addr and relays every connection to target.
func forwardOn(t *testing.T, addr, target string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Error(err)
		return
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer up.Close()
				go io.Copy(up, c)
				io.Copy(c, up)
			}()
		}
	}()
}

// TestRun_OfflineThenBack: the API refuses connections (the "refused"
// recording); the Runtime waits without a timeout, emitting offline events
// with the next probe time, and when the API is back (a relay opens on the
// port) the step resumes its session and ends ok.
func TestRun_OfflineThenBack(t *testing.T) {
	t.Parallel()
	rc := loadFaultRecipe(t, "refused")
	b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main", Replies: []scripted.Reply{{Text: "BACK-ONLINE"}}}}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	rt := newRuntime(t, b, func(o *harness.Options) {
		o.Env = append(o.Env, "ANTHROPIC_BASE_URL=http://"+addr)
		o.Resilience.OnlineTimeout = 0
	})
	var mu sync.Mutex
	var offline, online int
	var nextProbe string
	onEvent := func(ev harness.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch ev.Kind {
		case "offline":
			offline++
			nextProbe, _ = ev.Data["next_probe"].(string)
			if offline == 2 { // the network comes back after two failed probes
				forwardOn(t, addr, strings.TrimPrefix(b.Model.URL(), "http://"))
			}
		case "online":
			online++
		}
	}
	res, err := rt.Run(runCtx(t), harness.NewAgentSpec("plain", "x"), "go on", harness.RunOptions{OnEvent: onEvent})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !res.OK || res.Text != "BACK-ONLINE" || res.Attempts < 2 || !res.Resumed {
		t.Fatalf("want ok after the API came back, resumed: %+v", res)
	}
	if offline < 2 || online != 1 || nextProbe == "" {
		t.Errorf("offline events %d (last next_probe %q), online events %d", offline, nextProbe, online)
	}
	if len(res.Errors) == 0 || !samePrefix(res.Errors[0], rc.recorded) {
		t.Errorf("first attempt failed with %q, the recording says %q", res.Errors, rc.recorded)
	}
	if n := len(b.Model.Requests()); n == 0 {
		t.Error("the model was never reached")
	}
}
