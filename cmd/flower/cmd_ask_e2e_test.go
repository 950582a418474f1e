package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/testkit/testbed"
)

// askBed is the run dir of the ask tests and a runner of the built flower
// in bed (combined output and exit code).
func askBed(t *testing.T, bed *testbed.Bed) (runDir string, run func(args ...string) (string, int)) {
	flower := testbed.BuildBinary(t, "./cmd/flower")
	runDir = filepath.Join(t.TempDir(), "runs")
	env := flowerbin.Env(t, bed.Env(), bed.Claude, "FLOWER_RUN_DIR="+runDir)
	return runDir, func(args ...string) (string, int) {
		cmd := testbed.Command(t, flower, args...)
		cmd.Env, cmd.Dir = env, bed.Workspace
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
}

// TestE2E_Ask: the oracle answers from the newest run's events, and the
// run dir is byte-identical afterwards.
func TestE2E_Ask(t *testing.T) {
	t.Parallel()
	bed := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{
		{Name: "oracle", Match: scripted.Match{System: "你是旁路问答"}, Replies: []scripted.Reply{{Text: "ORACLE-ANSWER: the plain step finished"}}},
		{Name: "step", Replies: []scripted.Reply{{Text: "STEP-SAID-THIS"}}},
	}})
	runDir, run := askBed(t, bed)
	if out, code := run("ask", "anything?"); code != 1 || !strings.Contains(out, "no runs") {
		t.Fatalf("ask without runs: %d %s", code, out)
	}
	if out, code := run("step", "do the thing"); code != 0 {
		t.Fatalf("step: %d %s", code, out)
	}
	before := treeHash(t, runDir)
	out, code := run("ask", "where are we?")
	if code != 0 || !strings.Contains(out, "ORACLE-ANSWER") {
		t.Fatalf("ask: %d %s", code, out)
	}
	reqs := bed.Model.RequestsFor("oracle")
	if len(reqs) != 1 {
		t.Fatalf("oracle requests = %d", len(reqs))
	}
	seen := reqs[0].Text()
	for _, want := range []string{"where are we?", "STEP-SAID-THIS", "events.jsonl", "统计: 1 个步骤结束(0 个失败)"} {
		if !strings.Contains(seen, want) {
			t.Errorf("the oracle was not shown %q", want)
		}
	}
	if after := treeHash(t, runDir); after != before {
		t.Error("flower ask changed the run dir")
	}
	js, code := run("ask", "where are we?", "--json")
	if code != 0 || gjson.Get(js, "kind").String() != "step_result" {
		t.Errorf("ask --json: %d %s", code, js)
	}
	checkSchema(t, "ask --json", js)
	if _, code := run("ask"); code != 2 {
		t.Errorf("ask without a question: exit %d", code)
	}
}

// TestE2E_AskOffline: with the API gone, `flower ask --online-timeout 3s`
// shows the offline state on stderr as a step does, gives up with exit 1,
// and leaves no flower-ask-* folder in $TMPDIR. (The step before it, with
// the API there, is the control that ask has a run to ask about.)
func TestE2E_AskOffline(t *testing.T) {
	t.Parallel()
	bed := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{
		{Name: "step", Replies: []scripted.Reply{{Text: "STEP-SAID-THIS"}}},
	}})
	_, run := askBed(t, bed)
	if out, code := run("step", "do the thing"); code != 0 {
		t.Fatalf("step: %d %s", code, out)
	}
	bed.Model.Close()
	out, code := run("ask", "--online-timeout", "3s", "where are we?")
	if code != 1 || !strings.Contains(out, "offline:") || !strings.Contains(out, "gave up") {
		t.Fatalf("ask offline: exit %d\n%s", code, out)
	}
	if left, _ := filepath.Glob(filepath.Join(bed.Tmp, "flower-ask-*")); len(left) > 0 {
		t.Errorf("ask left %v", left)
	}
}
