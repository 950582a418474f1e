package harness_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// flowerStep runs the built flower binary's step command in the bed, as a
// contained child of t (testbed.Command).
func flowerStep(t testing.TB, b *testbed.Bed, flower, hook, runDir string, args ...string) *exec.Cmd {
	full := append([]string{"step", "-C", b.Workspace, "--run-dir", runDir, "--claude", b.Claude, "--hook", hook}, args...)
	cmd := testbed.Command(t, flower, full...)
	cmd.Env = b.Env()
	cmd.Dir = b.Workspace
	return cmd
}

func TestFlowerStep_ParallelManifest(t *testing.T) {
	t.Parallel()
	b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main",
		Func: func(r scripted.Request) scripted.Reply { return scripted.Reply{Text: "ECHO " + lastUserText(r)} }}}})
	flower := testbed.BuildBinary(t, "./cmd/flower")
	hook := hookBinary(t)
	runDir := filepath.Join(filepath.Dir(b.Workspace), "runs")
	const n = 8
	var wg sync.WaitGroup
	outs := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := flowerStep(t, b, flower, hook, runDir, "--name", fmt.Sprintf("p%d", i), fmt.Sprintf("TASK_%d", i))
			out, err := cmd.CombinedOutput()
			outs[i], errs[i] = string(out), err
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || !strings.Contains(outs[i], fmt.Sprintf("TASK_%d", i)) {
			t.Errorf("flower step %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	rows, err := harness.ReadManifest(filepath.Join(runDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, r := range rows {
		for _, res := range r.Results {
			if res.OK {
				names[res.Step] = true
			}
		}
	}
	if len(rows) != n || len(names) != n {
		t.Fatalf("manifest has %d rows and %d ok steps, want %d each: %+v", len(rows), len(names), n, rows)
	}
}

func TestFlowerStep_JSONAndExitCodes(t *testing.T) {
	t.Parallel()
	bad := scripted.Reply{Fault: &scripted.Fault{Status: 400, Type: "invalid_request_error", Message: "bad thing"}}
	// Each claude session starts the script over, so the failing run is
	// routed by its prompt rather than by coming second.
	b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{
		{Name: "bad", Match: scripted.Match{FirstUser: "fails"}, Func: func(scripted.Request) scripted.Reply { return bad }},
		{Name: "main", Replies: []scripted.Reply{{Text: "JSON_DONE"}}},
	}})
	flower := testbed.BuildBinary(t, "./cmd/flower")
	hook := hookBinary(t)
	runDir := filepath.Join(filepath.Dir(b.Workspace), "runs")

	cmd := flowerStep(t, b, flower, hook, runDir, "--json", "-")
	cmd.Stdin = strings.NewReader("prompt from stdin")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("flower step --json: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var res struct { // the step_result line (docs/cli.md "JSON output")
		Kind string `json:"kind"`
		OK   bool   `json:"ok"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil || res.Kind != "step_result" || !res.OK || res.Text != "JSON_DONE" {
		t.Fatalf("last line is not the step_result: %q (%v)", lines[len(lines)-1], err)
	}
	var ev harness.Event
	if len(lines) < 3 || json.Unmarshal([]byte(lines[0]), &ev) != nil || ev.Kind == "" {
		t.Fatalf("no event lines before the result: %q", lines)
	}

	cmd = flowerStep(t, b, flower, hook, runDir, "fails")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "bad thing") {
		t.Fatalf("failing step: err %v, stderr %q", err, stderr.String())
	}

	cmd = flowerStep(t, b, flower, hook, runDir, "--role", "nope", "x")
	if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("bad role: want exit 2, got %v", err)
	}
}

// childrenOf lists the pids whose parent is pid.
func childrenOf(pid int) []int {
	var out []int
	for _, p := range allProcs() {
		if len(p.fields) > 1 && p.fields[1] == strconv.Itoa(pid) {
			if n, err := strconv.Atoi(p.pid); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

func TestFlowerStep_SIGINT(t *testing.T) {
	t.Parallel()
	inFlight := make(chan struct{}, 1)
	b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main",
		Func: func(scripted.Request) scripted.Reply {
			select {
			case inFlight <- struct{}{}:
			default:
			}
			return scripted.Reply{Text: "TOO_LATE", DelayMS: 60_000}
		}}}})
	flower := testbed.BuildBinary(t, "./cmd/flower")
	cmd := flowerStep(t, b, flower, hookBinary(t), filepath.Join(filepath.Dir(b.Workspace), "runs"), "wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-inFlight:
	case <-time.After(testbed.Left(t)):
		t.Fatal("the model never got the request")
	}
	kids := childrenOf(cmd.Process.Pid)
	if len(kids) == 0 {
		t.Fatal("flower step has no child claude")
	}
	start := time.Now()
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("want exit 130, got %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("SIGINT took %s to end the step", d)
	}
	for _, pgid := range kids {
		if !groupGone(pgid) {
			t.Errorf("claude's process group %d outlived flower step", pgid)
		}
	}
}
