package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/sessionstore"
)

// starterSteps are the step names of a starter flow whose first review
// finds the goal achieved.
var starterSteps = []string{flow.ClarifyStepName, flow.GoalStepName, flow.WorkStepName, flow.WorkStepName + "-评审#1"}

// TestRoot_StarterFlowOnAFakeRuntime: `flower "ask"` runs the starter flow
// on the factory's runtime: each role is asked once in order, the brief and
// the goal land in the workbench's notes, the human view shows every step
// and the outcome, and the exit code follows the verdict. The not-achieved
// and unreachable rows are the controls: the same run with another verdict
// exits otherwise.
func TestRoot_StarterFlowOnAFakeRuntime(t *testing.T) {
	for _, tc := range []struct {
		name, verdict string
		code          int
		steps         []string
		out           []string
	}{
		{"achieved", fakeAchieved, exitOK, starterSteps,
			[]string{"✓ [1/3] clarify", "✓ [2/3] goal", "✓ [3/3] work", "✓ [3/3] review #1 → achieved", "done — $0.0400", "verdict   achieved"}},
		{"control: not achieved in the one round", fakeNotYet, exitFailed, starterSteps,
			[]string{"○ [3/3] review #1 → not_yet", "failed at step work — $0.0400", "verdict   not_yet: 缺测试"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			e, out, errb := testEnv("")
			rts := fakeFactory(t, e, starterAnswers(tc.verdict))
			code := run(context.Background(), e, []string{"flower", "-C", ws, "--no-self-test", "--timeout", "0", "--rounds", "1", "做计算器"})
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errb)
			}
			if len(*rts) != 1 {
				t.Fatalf("%d runtimes built, want 1", len(*rts))
			}
			rt := (*rts)[0]
			if got := rt.steps(); !slices.Equal(got, tc.steps) {
				t.Errorf("steps %v, want %v", got, tc.steps)
			}
			if rt.opts.Workspace != ws || rt.opts.RunDir != filepath.Join(ws, ".flower", "runs") || rt.opts.Workbench == nil {
				t.Errorf("runtime options: workspace %s, run dir %s, workbench %v", rt.opts.Workspace, rt.opts.RunDir, rt.opts.Workbench)
			}
			for _, s := range tc.out {
				if !strings.Contains(out.String(), s) {
					t.Errorf("the view lacks %q:\n%s", s, out)
				}
			}
			if b, err := os.ReadFile(filepath.Join(ws, ".flower", "notes", flow.DefaultBriefName)); err != nil || !strings.Contains(string(b), "能加减") {
				t.Errorf("brief: %q %v", b, err)
			}
			if call := rt.calls[2]; !strings.Contains(call.Prompt, "做计算器") || !call.Spec.DelegateOnly {
				t.Errorf("the coordinator was asked %q with spec %+v", call.Prompt, call.Spec)
			}
		})
	}
}

// TestRoot_JSONLines: with --json stdout is JSON lines only: the events of
// every step, then the flow_result naming the run the runtime made, its
// steps and the verdict, last. Control: the failed run's flow_result says
// so (ok false, its exit code and error).
func TestRoot_JSONLines(t *testing.T) {
	for _, tc := range []struct {
		name, verdict string
		ok            bool
		code          int
	}{
		{"achieved", fakeAchieved, true, exitOK},
		{"control: not achieved", fakeNotYet, false, exitFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			e, out, errb := testEnv("")
			rts := fakeFactory(t, e, starterAnswers(tc.verdict))
			code := run(context.Background(), e, []string{"flower", "-C", ws, "--json", "--no-self-test", "--timeout", "0", "--rounds", "1", "做计算器"})
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tc.code, out, errb)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			kinds := map[string]int{}
			for _, l := range lines {
				if !gjson.Valid(l) {
					t.Fatalf("not a JSON line: %q", l)
				}
				kinds[gjson.Get(l, "kind").String()]++
			}
			if kinds[harness.EventStepStart] != 4 || kinds[harness.EventStepEnd] != 4 || kinds["flow_result"] != 1 {
				t.Errorf("kinds %v, want 4 step_start, 4 step_end, 1 flow_result", kinds)
			}
			last := gjson.Parse(lines[len(lines)-1])
			rt := (*rts)[0]
			if last.Get("kind").String() != "flow_result" || last.Get("ok").Bool() != tc.ok || int(last.Get("exit_code").Int()) != tc.code ||
				last.Get("run").String() != rt.RunID() || len(last.Get("steps").Array()) != 4 {
				t.Errorf("last line %s (run %s)", last.Raw, rt.RunID())
			}
			if tc.ok && last.Get("verdict").String() != flow.Achieved {
				t.Errorf("verdict %s", last.Get("verdict"))
			}
			if !tc.ok && (!strings.Contains(last.Get("error").String(), "goal not achieved") || !strings.Contains(errb.String(), "goal not achieved")) {
				t.Errorf("error %s; stderr %q", last.Get("error"), errb)
			}
		})
	}
}

// TestRoot_RecordsTheRunInTheStore: with --store the run's manifest row is
// copied into the store once the flow ends, so `flower runs --store` lists
// it. Control: the run dir's manifest holds the same row, and a second
// store nobody named stays empty.
func TestRoot_RecordsTheRunInTheStore(t *testing.T) {
	ws := t.TempDir()
	db := filepath.Join(t.TempDir(), "shared.db")
	e, out, errb := testEnv("")
	rts := fakeFactory(t, e, starterAnswers(fakeAchieved))
	if code := run(context.Background(), e, []string{"flower", "-C", ws, "--store", db, "--no-self-test", "--timeout", "0", "做计算器"}); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errb)
	}
	rt := (*rts)[0]
	st, err := sessionstore.OpenURL(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background())
	if err != nil || len(runs) != 1 || runs[0].Run != rt.RunID() || !strings.Contains(string(runs[0].Row), flow.WorkStepName+"-评审#1") {
		t.Fatalf("store runs %+v, %v; want run %s with its steps", runs, err, rt.RunID())
	}
	rows, err := harness.ReadManifest(filepath.Join(rt.RunDir(), "manifest.json"))
	if err != nil || len(rows) != 1 || rows[0].Run != rt.RunID() {
		t.Errorf("control: manifest rows %+v, %v", rows, err)
	}
	other, err := sessionstore.OpenURL(context.Background(), filepath.Join(t.TempDir(), "other.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if runs, _ := other.Runs(context.Background()); len(runs) != 0 {
		t.Errorf("control: an unnamed store has runs %+v", runs)
	}
}

// executables are two stand-ins for claude and flower-hook that the
// self-test's cache can stat; nothing runs them.
func executables(t *testing.T) (claude, hook string) {
	dir := t.TempDir()
	claude, hook = filepath.Join(dir, "claude"), filepath.Join(dir, "flower-hook")
	for _, p := range []string{claude, hook} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return claude, hook
}

// TestRoot_SelfTestFailureStopsTheRun: a failing guard self-test stops the
// run before anything is written or any runtime is built, with one line on
// stderr: the failure and the ways on (flower doctor, --no-self-test).
// Control: the self-test passing runs the flow and stamps the run dir, so
// the next run does not test again.
func TestRoot_SelfTestFailureStopsTheRun(t *testing.T) {
	claude, hook := executables(t)
	args := func(ws string) []string {
		return []string{"flower", "-C", ws, "--claude", claude, "--hook", hook, "--timeout", "0", "做计算器"}
	}
	t.Run("failure", func(t *testing.T) {
		ws := t.TempDir()
		e, out, errb := testEnv("")
		rts := fakeFactory(t, e, starterAnswers(fakeAchieved))
		var tested []string
		e.SelfTest = func(_ context.Context, c, h string) error {
			tested = append(tested, c, h)
			return fmt.Errorf("flower: %w: the main thread's Bash ran (the delegate guard did not deny it)", ErrSelfTest)
		}
		code := run(context.Background(), e, args(ws))
		const want = "flower: guard self-test failed: the main thread's Bash ran (the delegate guard did not deny it)" +
			" (the guards would not hold: `flower doctor` shows details; --no-self-test starts anyway)\n"
		if code != exitFailed || errb.String() != want || out.Len() != 0 {
			t.Errorf("exit %d, stdout %q, stderr %q", code, out, errb)
		}
		if !slices.Equal(tested, []string{claude, hook}) || len(*rts) != 0 {
			t.Errorf("self-tested %v, %d runtimes built; want %s %s and none", tested, len(*rts), claude, hook)
		}
		if _, err := os.Stat(filepath.Join(ws, ".flower")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a refused run wrote %s/.flower (%v)", ws, err)
		}
	})
	t.Run("control: passed, stamped, not tested again", func(t *testing.T) {
		ws := t.TempDir()
		e, out, errb := testEnv("")
		rts := fakeFactory(t, e, starterAnswers(fakeAchieved))
		tests := 0
		e.SelfTest = func(context.Context, string, string) error { tests++; return nil }
		for i := range 2 {
			if code := run(context.Background(), e, args(ws)); code != exitOK {
				t.Fatalf("run %d: exit %d\n%s\n%s", i, code, out, errb)
			}
		}
		if tests != 1 || len(*rts) != 2 {
			t.Errorf("%d self-tests and %d runtimes for two runs, want 1 and 2", tests, len(*rts))
		}
		if _, err := os.Stat(filepath.Join(ws, ".flower", "runs", "selftest.ok")); err != nil {
			t.Errorf("no stamp: %v", err)
		}
	})
}

// TestRoot_StoreOpenFailureStopsTheRun: a --store that cannot be opened
// stops the run with one line naming it, before the self-test, before any
// runtime and before anything is written. Control: TestRoot_RecordsTheRunInTheStore
// (the same run with a store that opens).
func TestRoot_StoreOpenFailureStopsTheRun(t *testing.T) {
	ws := t.TempDir()
	e, out, errb := testEnv("")
	rts := fakeFactory(t, e, starterAnswers(fakeAchieved))
	var opened []string
	e.OpenStore = func(_ context.Context, u string, o harness.StoreOptions) (*sessionstore.Store, error) {
		opened = append(opened, u+" "+o.Workspace)
		return nil, errors.New("sessionstore: postgres://db.example/flower: connection refused")
	}
	e.SelfTest = func(context.Context, string, string) error {
		t.Error("self-test ran after the store failed")
		return nil
	}
	code := run(context.Background(), e, []string{"flower", "-C", ws, "--store", "postgres://db.example/flower", "--timeout", "0", "做计算器"})
	if code != exitFailed || errb.String() != "flower: postgres://db.example/flower: connection refused\n" || out.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and one line", code, out, errb)
	}
	if !slices.Equal(opened, []string{"postgres://db.example/flower " + ws}) || len(*rts) != 0 {
		t.Errorf("opened %v, %d runtimes built", opened, len(*rts))
	}
	if _, err := os.Stat(filepath.Join(ws, ".flower")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused run wrote %s/.flower (%v)", ws, err)
	}
}

// TestRoot_BudgetStopsTheFlow: --max-budget-usd hands each step what is
// left and starts no step once the steps' cost reached it: the run ends
// with verdict "budget", exit 1. Control: a budget the flow stays under
// changes nothing.
func TestRoot_BudgetStopsTheFlow(t *testing.T) {
	for _, tc := range []struct {
		budget string
		code   int
		steps  []string
		want   string
	}{
		{"0.015", exitFailed, starterSteps[:2], `"verdict":"budget"`},
		{"1", exitOK, starterSteps, `"verdict":"achieved"`},
	} {
		t.Run(tc.budget, func(t *testing.T) {
			e, out, errb := testEnv("")
			rts := fakeFactory(t, e, starterAnswers(fakeAchieved))
			code := run(context.Background(), e, []string{"flower", "-C", t.TempDir(), "--json", "--no-self-test", "--timeout", "0", "--max-budget-usd", tc.budget, "做计算器"})
			rt := (*rts)[0]
			if code != tc.code || !slices.Equal(rt.steps(), tc.steps) || !strings.Contains(out.String(), tc.want) {
				t.Errorf("exit %d, steps %v, stderr %q; want %d, %v and %s", code, rt.steps(), errb, tc.code, tc.steps, tc.want)
			}
			if spec := rt.calls[1].Spec; spec.MaxBudgetUSD <= 0 || spec.MaxBudgetUSD > 1 {
				t.Errorf("the second step's budget is %g", spec.MaxBudgetUSD)
			}
		})
	}
}

// TestRoot_WakesTheWork: a second `flower "…"` in the same workspace wakes
// the work: clarify is skipped (the brief is on disk and gets the new
// words), the goal is derived again and the coordinator resumes its
// session. Control: the first run clarified.
func TestRoot_WakesTheWork(t *testing.T) {
	ws := t.TempDir()
	e, out, errb := testEnv("")
	rts := fakeFactory(t, e, starterAnswers(fakeAchieved))
	for i, ask := range []string{"做计算器", "还要支持乘法"} {
		if code := run(context.Background(), e, []string{"flower", "-C", ws, "--no-self-test", "--timeout", "0", ask}); code != exitOK {
			t.Fatalf("run %d: exit %d\n%s\n%s", i, code, out, errb)
		}
	}
	first, second := (*rts)[0], (*rts)[1]
	if !slices.Equal(first.steps(), starterSteps) {
		t.Errorf("control: first run's steps %v", first.steps())
	}
	if want := starterSteps[1:]; !slices.Equal(second.steps(), want) {
		t.Errorf("woken run's steps %v, want %v", second.steps(), want)
	}
	work := second.calls[1]
	if work.Opts.Resume != "sid-"+flow.WorkStepName || !strings.Contains(work.Prompt, "还要支持乘法") {
		t.Errorf("the woken coordinator: resume %q, prompt %q", work.Opts.Resume, work.Prompt)
	}
	if !strings.Contains(out.String(), "waking the work: found the brief") {
		t.Errorf("the view does not say it woke the work:\n%s", out)
	}
}
