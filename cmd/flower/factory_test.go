package main

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/testkit/flowerbin"
)

// fakeRuntime stands in for harness.Runtime in in-process command tests:
// every Run answers from answer (by step name; default: OK, text "done"),
// reports step_start, the main thread's text, result and step_end to the
// step's OnEvent and its record as the Runtime does, and writes the run's
// manifest row, so the command's view, its outcome and its run record see
// a run. Nothing is started.
type fakeRuntime struct {
	opts   harness.Options
	run    string
	answer func(step string, spec harness.AgentSpec, prompt string) harness.StepResult

	mu        sync.Mutex
	calls     []fakeCall
	results   []harness.StepResult
	recorded  []harness.Event
	onSession func(string)
	closed    bool
}

// fakeCall is one Run the fake saw.
type fakeCall struct {
	Step   string
	Spec   harness.AgentSpec
	Prompt string
	Opts   harness.RunOptions
}

// fakeFactory fills e's NewRuntime with fakes answering from answer and
// returns where the runtimes it built are listed.
func fakeFactory(t *testing.T, e *cmdEnv, answer func(step string, spec harness.AgentSpec, prompt string) harness.StepResult) *[]*fakeRuntime {
	t.Helper()
	var built []*fakeRuntime
	e.NewRuntime = func(_ context.Context, o harness.Options) (stepRunner, error) {
		f := &fakeRuntime{opts: o, run: o.RunID, answer: answer}
		if f.run == "" {
			f.run = harness.NewRunID()
		}
		built = append(built, f)
		return f, nil
	}
	t.Cleanup(func() {
		for _, f := range built {
			if !f.closed {
				t.Errorf("the command never closed runtime %s", f.run)
			}
		}
	})
	return &built
}

func (f *fakeRuntime) Run(_ context.Context, spec harness.AgentSpec, prompt string, o harness.RunOptions) (harness.StepResult, error) {
	step := o.StepName
	if step == "" {
		step = spec.Name
	}
	emit := func(kind string, data map[string]any, raw ...byte) {
		ev := harness.Event{Kind: kind, Step: step, Data: data, Raw: raw, Time: time.Now()}
		f.Record(ev)
		if o.OnEvent != nil {
			o.OnEvent(ev)
		}
	}
	f.mu.Lock()
	f.calls = append(f.calls, fakeCall{Step: step, Spec: spec, Prompt: prompt, Opts: o})
	f.mu.Unlock()
	started := float64(time.Now().UnixNano()) / 1e9
	emit(harness.EventStepStart, map[string]any{"resume": o.Resume, "fork": o.Fork})
	res := harness.StepResult{OK: true, Text: "done"}
	if f.answer != nil {
		res = f.answer(step, spec, prompt)
	}
	res.Step, res.Attempts, res.StartedAt = step, 1, started
	if res.SessionID == "" {
		res.SessionID = "sid-" + step
	}
	if f.onSession != nil {
		f.onSession(res.SessionID)
	}
	emit(harness.EventAssistant, map[string]any{"text": res.Text}, []byte(`{"type":"assistant","message":{"id":"msg-`+step+`"}}`)...)
	emit(harness.EventResult, map[string]any{"subtype": "success", "is_error": !res.OK, "num_turns": 1, "cost_usd": res.CostUSD})
	res.EndedAt = started + 1
	emit(harness.EventStepEnd, map[string]any{"ok": res.OK, "error": res.Error, "session_id": res.SessionID, "attempts": res.Attempts})
	f.mu.Lock()
	f.results = append(f.results, res)
	row := harness.ManifestRow{Run: f.run, Workspace: f.opts.Workspace, StartedAt: f.results[0].StartedAt, UpdatedAt: res.EndedAt, Results: f.results}
	f.mu.Unlock()
	if err := harness.WriteManifestRow(filepath.Join(f.opts.RunDir, "manifest.json"), row); err != nil {
		return res, err
	}
	return res, nil
}

func (f *fakeRuntime) OnSession(fn func(string)) func() {
	f.onSession = fn
	return func() { f.onSession = nil }
}

func (f *fakeRuntime) Record(ev harness.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.recorded = append(f.recorded, ev)
}

func (f *fakeRuntime) RunID() string      { return f.run }
func (f *fakeRuntime) RunDir() string     { return f.opts.RunDir }
func (f *fakeRuntime) Workspace() string  { return f.opts.Workspace }
func (f *fakeRuntime) EventsPath() string { return filepath.Join(f.opts.RunDir, f.run, "events.jsonl") }
func (f *fakeRuntime) Interrupt(string) int {
	return 0
}
func (f *fakeRuntime) Close() error { f.closed = true; return nil }

func (f *fakeRuntime) Results() []harness.StepResult {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]harness.StepResult(nil), f.results...)
}

// steps are the step names the fake ran, in order.
func (f *fakeRuntime) steps() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, c.Step)
	}
	return out
}

// The starter flow's documents as a fake model writes them.
const (
	fakeBrief    = "## 目标\n做计算器\n## 验收标准\n能加减\n## 边界\n不做乘除\n## 未知与假设\n假设用 Go"
	fakeGoal     = "## 目标\n做计算器\n## 检查清单\n- 能加\n- 能减"
	fakeAchieved = "## 结论\n已达成\n## 理由\n都对\n## 未通过\n无"
	fakeNotYet   = "## 结论\n未达成\n## 理由\n缺测试\n## 未通过\n- 有测试"
)

// starterAnswers answers each role of the starter flow: the clarifier
// with a complete brief, the goal step with a goal, the coordinator with
// "done" and every review with verdict.
func starterAnswers(verdict string) func(string, harness.AgentSpec, string) harness.StepResult {
	return func(step string, _ harness.AgentSpec, prompt string) harness.StepResult {
		switch {
		case strings.HasPrefix(step, flow.ClarifyStepName):
			return harness.StepResult{OK: true, Text: fakeBrief, CostUSD: 0.01}
		case strings.HasPrefix(step, flow.GoalStepName):
			return harness.StepResult{OK: true, Text: fakeGoal, Structured: flowerbin.TypedGoal(fakeGoal).Structured, CostUSD: 0.01}
		case strings.HasPrefix(step, flow.WorkStepName+"-评审"):
			return harness.StepResult{OK: true, Text: verdict, Structured: flowerbin.TypedJudge(prompt, verdict).Structured, CostUSD: 0.01}
		}
		return harness.StepResult{OK: true, Text: "done", CostUSD: 0.01}
	}
}
