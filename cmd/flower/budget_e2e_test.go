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

// TestE2E_FlowBudget: `flower --max-budget-usd 0.3 "…"` whose goal step
// alone costs more (its reply reports 100000 input tokens) stops there:
// the goal step runs with what the clarifier left as its claude's own
// budget, claude stops it, and the flow ends with exit 1, verdict "budget";
// the work step and the judge never start. The
// control without the budget runs the same script to "achieved".
func TestE2E_FlowBudget(t *testing.T) {
	t.Parallel()
	run := func(budget ...string) (gjson.Result, int, *testbed.Bed) {
		s := fleetScript(func(scripted.Request) int { return 0 })
		goal := s.Conversations[1].Func
		s.Conversations[1].Func = func(r scripted.Request) scripted.Reply {
			rep := goal(r)
			rep.Usage = &scripted.Usage{InputTokens: 100000, OutputTokens: 5}
			return rep
		}
		bed := testbed.New(t, s)
		args := append([]string{"--json", "--timeout", "0", "--no-self-test", "--run-dir", filepath.Join(t.TempDir(), "runs"), "-C", bed.Workspace}, budget...)
		cmd := testbed.Command(t, testbed.BuildBinary(t, "./cmd/flower"), append(args, "FLOW-1 写 ok.txt")...)
		cmd.Env, cmd.Dir = flowerbin.Env(t, bed.Env(), bed.Claude), t.TempDir()
		out, errOut, code := testbed.Exec(t, cmd)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		last := gjson.Parse(lines[len(lines)-1])
		if last.Get("kind").String() != "flow_result" {
			t.Fatalf("no flow_result (exit %d): %s\n%s", code, flowerbin.Tail([]byte(out)), errOut)
		}
		return last, code, bed
	}
	last, code, bed := run("--max-budget-usd", "0.3")
	if code != 1 || last.Get("verdict").String() != "budget" || last.Get("ok").Bool() || last.Get("cost_usd").Float() < 0.3 ||
		!strings.Contains(last.Get("error").String(), "budget") {
		t.Errorf("with --max-budget-usd 0.3: exit %d, %s", code, last.Raw)
	}
	// The goal step was given what the clarifier left ($0.3 - $0.00014) as
	// its own --max-budget-usd, and claude stopped it there.
	if e := last.Get("steps.1.error").String(); !strings.Contains(e, "maximum budget ($0.29986)") {
		t.Errorf("the goal step was not held to the remaining budget: %s", last.Get("steps").Raw)
	}
	if n, j := len(bed.Model.RequestsFor("coordinator")), len(bed.Model.RequestsFor("judge")); n != 0 || j != 0 {
		t.Errorf("the budget was spent, yet the work step (%d requests) or the judge (%d) ran", n, j)
	}
	last, code, bed = run()
	if code != 0 || last.Get("verdict").String() != "achieved" || len(bed.Model.RequestsFor("coordinator")) == 0 {
		t.Errorf("control without a budget: exit %d, %s", code, last.Raw)
	}
}
