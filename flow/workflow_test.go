package flow

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/flowerhq/flower/harness"
)

func spec(name string) harness.AgentSpec { return harness.NewAgentSpec(name, "") }

func pass(context.Context, harness.StepResult, Ctx) (bool, error) { return true, nil }

// gateSeq returns a gate answering from a list (last value repeats).
func gateSeq(vals ...bool) Gate {
	i := 0
	return func(context.Context, harness.StepResult, Ctx) (bool, error) {
		v := vals[min(i, len(vals)-1)]
		i++
		return v, nil
	}
}

func run(t *testing.T, w *Workflow, f *fakeRunner) (Ctx, []harness.Event) {
	t.Helper()
	var evs []harness.Event
	c, err := w.Run(t.Context(), f, func(e harness.Event) { evs = append(evs, e) }, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return c, evs
}

func TestStepPositionalAndPrompt(t *testing.T) {
	s := NewStep("取词", spec("terse"), Text("读 seed.txt …"))
	if s.Name != "取词" || s.Spec.Name != "terse" || s.Prompt(nil) != "读 seed.txt …" || s.OnFail != "" {
		t.Fatalf("NewStep = %+v", s)
	}
	f := newFake().queue("a", ok("A-OUT", "s1"))
	w := NewWorkflow([]Step{
		NewStep("a", spec("x"), Text("first")),
		NewStep("b", spec("y"), func(c Ctx) string { return "got " + c.String("a") }),
	})
	c, _ := run(t, w, f)
	if got := []string{f.calls[0].Prompt, f.calls[1].Prompt}; !reflect.DeepEqual(got, []string{"first", "got A-OUT"}) {
		t.Errorf("prompts = %v", got)
	}
	if c.String("b") != "done" || w.Name != "workflow" || !w.Continuous {
		t.Errorf("ctx[b] = %q, name %q, continuous %v", c.String("b"), w.Name, w.Continuous)
	}
}

func TestWhenSkips(t *testing.T) {
	f := newFake()
	w := NewWorkflow([]Step{
		{Name: "a", Spec: spec("a"), Prompt: Text("p"), When: func(c Ctx) bool { c["seen"] = true; return false }},
		{Name: "b", Spec: spec("b"), Prompt: Text("p")},
	})
	c, evs := run(t, w, f)
	if !reflect.DeepEqual(f.labels(), []string{"b"}) || c["seen"] != true {
		t.Errorf("labels = %v", f.labels())
	}
	if len(evs) != 1 || evs[0].Data["index"] != 1 || evs[0].Data["total"] != 2 {
		t.Errorf("events = %+v", evs)
	}
}

// Retry labels, and on_reject's four rules.
func TestRetrySemantics(t *testing.T) {
	tests := []struct {
		name       string
		onReject   func(harness.StepResult, Ctx) string
		replies    []harness.StepResult
		wantLabels []string
		wantPrompt []string
		wantResume []string
		wantFork   []bool
	}{
		{
			name:       "no on_reject: fresh, same prompt, same resume_from, #retryN",
			replies:    []harness.StepResult{ok("1", "s1"), ok("2", "s2"), ok("3", "s3")},
			wantLabels: []string{"w", "w#retry1", "w#retry2"},
			wantPrompt: []string{"P", "P", "P"},
			wantResume: []string{"base", "base", "base"},
			wantFork:   []bool{true, true, true},
		},
		{
			name:       "on_reject: resume the rejected session with its text, fork off, #roundN",
			onReject:   func(r harness.StepResult, _ Ctx) string { return "fix " + r.Text },
			replies:    []harness.StepResult{ok("1", "s1"), ok("2", "s2"), ok("3", "s3")},
			wantLabels: []string{"w", "w#round2", "w#round3"},
			wantPrompt: []string{"P", "fix 1", "fix 2"},
			wantResume: []string{"base", "s1", "s2"},
			wantFork:   []bool{true, false, false},
		},
		{
			name:       "on_reject returns empty: degrades to a fresh attempt",
			onReject:   func(harness.StepResult, Ctx) string { return "" },
			replies:    []harness.StepResult{ok("1", "s1"), ok("2", "s2"), ok("3", "s3")},
			wantLabels: []string{"w", "w#round2", "w#round3"},
			wantPrompt: []string{"P", "P", "P"},
			wantResume: []string{"base", "base", "base"},
			wantFork:   []bool{true, true, true},
		},
		{
			name:       "no session id: degrades to a fresh attempt",
			onReject:   func(harness.StepResult, Ctx) string { return "fix" },
			replies:    []harness.StepResult{ok("1", "-"), ok("2", "s2"), ok("3", "s3")},
			wantLabels: []string{"w", "w#round2", "w#round3"},
			wantPrompt: []string{"P", "P", "fix"},
			wantResume: []string{"base", "base", "s2"},
			wantFork:   []bool{true, true, false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake().queue("w", tt.replies[0]).queue("w#retry1", tt.replies[1]).queue("w#round2", tt.replies[1]).
				queue("w#retry2", tt.replies[2]).queue("w#round3", tt.replies[2])
			w := NewWorkflow([]Step{
				{Name: "base", Spec: spec("b"), Prompt: Text("b")},
				{Name: "w", Spec: spec("w"), Prompt: Text("P"), ResumeFrom: "base", Fork: true, Retries: 2,
					Gate: gateSeq(false, false, false), OnReject: tt.onReject},
			})
			f.queue("base", ok("b", "base"))
			c, _ := run(t, w, f)
			calls := f.callsFor("w")
			var labels, prompts, resumes []string
			var forks []bool
			for _, cl := range calls {
				labels = append(labels, cl.Opts.StepName)
				prompts = append(prompts, cl.Prompt)
				resumes = append(resumes, cl.Opts.Resume)
				forks = append(forks, cl.Opts.Fork)
			}
			for _, cmp := range []struct{ got, want any }{{labels, tt.wantLabels}, {prompts, tt.wantPrompt}, {resumes, tt.wantResume}, {forks, tt.wantFork}} {
				if !reflect.DeepEqual(cmp.got, cmp.want) {
					t.Errorf("got %v, want %v", cmp.got, cmp.want)
				}
			}
			if c.String(KeyFailed) != "w" {
				t.Errorf("_failed = %q", c.String(KeyFailed))
			}
			if r, _ := c.Result("w"); r.Text != "3" {
				t.Errorf("_results[w] = %+v, want the last attempt", r)
			}
		})
	}
}

func TestGatePassStopsRetrying(t *testing.T) {
	f := newFake()
	w := NewWorkflow([]Step{{Name: "w", Spec: spec("w"), Prompt: Text("P"), Retries: 5, Gate: gateSeq(false, true)}})
	c, _ := run(t, w, f)
	if !reflect.DeepEqual(f.labels(), []string{"w", "w#retry1"}) || c.String("w") != "done" || c.String(KeyFailed) != "" {
		t.Errorf("labels = %v, ctx = %v", f.labels(), c)
	}
}

func TestFailedResultSkipsGateAndRetries(t *testing.T) {
	gated := 0
	f := newFake().queue("w", harness.StepResult{Error: "boom", SessionID: "s1"})
	w := NewWorkflow([]Step{{Name: "w", Spec: spec("w"), Prompt: Text("P"), Retries: 1,
		Gate: func(context.Context, harness.StepResult, Ctx) (bool, error) { gated++; return true, nil }}})
	c, _ := run(t, w, f)
	if gated != 1 || !reflect.DeepEqual(f.labels(), []string{"w", "w#retry1"}) || c.String(KeyFailed) != "" {
		t.Errorf("gated %d, labels %v, failed %q", gated, f.labels(), c.String(KeyFailed))
	}
}

// StepAbort: stop at once, keep the remaining retries, record _aborted, then
// on_fail as for any failure.
func TestStepAbortAndOnFail(t *testing.T) {
	abort := func(context.Context, harness.StepResult, Ctx) (bool, error) { return false, Abort("没救了") }
	tests := []struct {
		onFail     string
		wantLabels []string
		wantErr    bool
	}{
		{"", []string{"a"}, false},
		{OnFailStop, []string{"a"}, false},
		{OnFailContinue, []string{"a", "b"}, false},
		{OnFailRaise, []string{"a"}, true},
	}
	for _, tt := range tests {
		t.Run("on_fail="+tt.onFail, func(t *testing.T) {
			f := newFake()
			w := NewWorkflow([]Step{
				{Name: "a", Spec: spec("a"), Prompt: Text("p"), Retries: 3, Gate: abort, OnFail: tt.onFail},
				{Name: "b", Spec: spec("b"), Prompt: Text("p")},
			})
			c, err := w.Run(t.Context(), f, nil, nil)
			if !reflect.DeepEqual(f.labels(), tt.wantLabels) {
				t.Errorf("labels = %v, want %v", f.labels(), tt.wantLabels)
			}
			if c.Aborted() != "没救了" {
				t.Errorf("_aborted = %q", c.Aborted())
			}
			if _, ok := c.Result("a"); !ok || c.Session("a") != "sid-a" {
				t.Error("a failed step's result and session must still be recorded")
			}
			if _, has := c["a"]; has {
				t.Error("a failed step must not write ctx[name]")
			}
			var se *StepError
			if tt.wantErr != errors.As(err, &se) {
				t.Fatalf("err = %v", err)
			}
			if tt.wantErr && se.ExitCode() != 3 {
				t.Errorf("ExitCode = %d, want 3", se.ExitCode())
			}
			if tt.onFail != OnFailContinue {
				if oc := c.Outcome(); oc == nil || oc.(*StepError).ExitCode() != 3 {
					t.Errorf("Outcome = %v", oc)
				}
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	t.Run("bad on_fail is refused before any run", func(t *testing.T) {
		f := newFake()
		_, err := NewWorkflow([]Step{{Name: "a", Spec: spec("a"), Prompt: Text("p"), OnFail: "skip"}}).Run(t.Context(), f, nil, nil)
		if err == nil || len(f.calls) != 0 {
			t.Errorf("err = %v, calls = %d", err, len(f.calls))
		}
	})
	t.Run("runner error ends the run", func(t *testing.T) {
		f := newFake()
		f.err = errors.New("no claude")
		_, err := NewWorkflow([]Step{{Name: "a", Spec: spec("a"), Prompt: Text("p")}}).Run(t.Context(), f, nil, nil)
		if err == nil || !errors.Is(err, f.err) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("a non-abort gate error ends the run", func(t *testing.T) {
		boom := errors.New("disk full")
		_, err := NewWorkflow([]Step{{Name: "a", Spec: spec("a"), Prompt: Text("p"),
			Gate: func(context.Context, harness.StepResult, Ctx) (bool, error) { return false, boom }}}).Run(t.Context(), newFake(), nil, nil)
		if !errors.Is(err, boom) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestReduceAndPrivateKeys(t *testing.T) {
	f := newFake()
	wb := harness.NewWorkbench(t.TempDir())
	ch := &fakeChannel{}
	w := NewWorkflow([]Step{{Name: "a", Spec: spec("a"), Prompt: Text("p"),
		Reduce: func(r harness.StepResult, _ Ctx) string { return "R:" + r.Text }}})
	w.Channel, w.Workbench, w.Context = ch, wb, Ctx{"seed": 1}
	c, _ := run(t, w, f)
	if c.String("a") != "R:done" || c["seed"] != 1 || c[KeyRuntime] != f || c[KeyChannel] != ch || c[KeyBench] != wb || c.String(KeyWorkflow) != "workflow" {
		t.Errorf("ctx = %v", c)
	}
	if _, ok := c[KeyOnEvent].(func(harness.Event)); !ok {
		t.Error("_on_event missing")
	}
	if _, has := w.Context["a"]; has {
		t.Error("Run wrote into Workflow.Context; a second run would see stale state")
	}
}

// The same Step value runs twice with the same starting prompt/resume/fork.
func TestStepRunsTwice(t *testing.T) {
	firstFails := func(_ context.Context, r harness.StepResult, _ Ctx) (bool, error) { return r.Step != "w", nil }
	s := Step{Name: "w", Spec: spec("w"), Prompt: Text("P"), Retries: 1, Gate: firstFails,
		OnReject: func(harness.StepResult, Ctx) string { return "fb" }}
	for i := 0; i < 2; i++ {
		f := newFake()
		w := &Workflow{Steps: []Step{s}}
		run(t, w, f)
		if f.calls[0].Prompt != "P" || f.calls[0].Opts.Resume != "" || f.calls[1].Prompt != "fb" {
			t.Errorf("run %d calls = %+v", i, f.calls)
		}
	}
	if s.Prompt(nil) != "P" || s.Retries != 1 {
		t.Error("Run changed the Step")
	}
}

// runtime.on_session wraps only the one Run line: it is off during the gate,
// so the gate's own runs (the judge) are never taken for the step's session.
func TestOnSessionWrapsOnlyRun(t *testing.T) {
	f := newFake()
	var watchingInGate bool
	w := NewWorkflow([]Step{{Name: "w", Spec: spec("w"), Prompt: Text("P"),
		Gate: func(ctx context.Context, _ harness.StepResult, c Ctx) (bool, error) {
			watchingInGate = f.onSession != nil
			rt := c[KeyRuntime].(Runner)
			_, err := rt.Run(ctx, spec("judge"), "judge it", harness.RunOptions{StepName: "w-评审#1"})
			return true, err
		}}})
	w.Lineage = NewLineage(t.TempDir(), "", "wf")
	c, _ := run(t, w, f)
	if !f.calls[0].Watching || f.calls[1].Watching || watchingInGate {
		t.Errorf("watching: run %v, judge %v, gate %v", f.calls[0].Watching, f.calls[1].Watching, watchingInGate)
	}
	if c.Session("w") != "sid-w" || w.Lineage.Latest("w") != "sid-w" || w.Lineage.Latest("w-评审#1") != "" {
		t.Errorf("sessions = %v, lineage = %v", c[KeySessions], w.Lineage.History("w"))
	}
}

// Lineage: original names only; a later process can resume_from an earlier
// run's step; continuous steps continue their own session with ResumePrompt.
func TestLineageAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	f1 := newFake()
	f1.runDir = dir
	f1.queue("w", ok("no", "s-first"))
	w1 := NewWorkflow([]Step{{Name: "w", Spec: spec("w"), Prompt: Text("P"), ResumePrompt: Text("接着来"), Retries: 1, Gate: gateSeq(false, true),
		OnReject: func(harness.StepResult, Ctx) string { return "again" }}})
	w1.Name = "wf"
	_, evs := run(t, w1, f1)
	lin := NewLineage(dir, "", "wf")
	if got := lin.History("w"); !reflect.DeepEqual(got, []string{"s-first", "sid-w#round2"}) {
		t.Errorf("lineage = %v (labels must not be keys)", got)
	}
	if lin.Latest("w#round2") != "" {
		t.Error("a suffixed label went into the lineage")
	}
	if evs[0].Data["resumed"] != false || evs[0].Data["woke"] != 0 {
		t.Errorf("first step event = %v", evs[0].Data)
	}

	// Process 2: continuity.
	f2 := newFake()
	f2.runDir = dir
	w2 := NewWorkflow([]Step{
		{Name: "w", Spec: spec("w"), Prompt: Text("P"), ResumePrompt: Text("接着来")},
		{Name: "later", Spec: spec("l"), Prompt: Text("L"), ResumeFrom: "w", Fork: true},
	})
	w2.Name = "wf"
	_, evs = run(t, w2, f2)
	if c := f2.calls[0]; c.Opts.Resume != "sid-w#round2" || c.Prompt != "接着来" || c.Opts.Fork {
		t.Errorf("continuity call = %+v", c)
	}
	if evs[0].Data["resumed"] != true || evs[0].Data["woke"] != 2 {
		t.Errorf("step event = %v", evs[0].Data)
	}
	// within the run, resume_from takes this run's session of w (fork kept).
	if c := f2.calls[1]; c.Opts.Resume != "sid-w" || !c.Opts.Fork {
		t.Errorf("resume_from call = %+v", c)
	}

	// Process 3: resume_from a step that only exists in the lineage.
	f3 := newFake()
	f3.runDir = dir
	w3 := NewWorkflow([]Step{{Name: "x", Spec: spec("x"), Prompt: Text("X"), ResumeFrom: "w"}})
	w3.Name = "wf"
	run(t, w3, f3)
	if f3.calls[0].Opts.Resume != "sid-w" {
		t.Errorf("cross-process resume_from = %q", f3.calls[0].Opts.Resume)
	}

	// Continuous off: always fresh, the full prompt.
	f4 := newFake()
	f4.runDir = dir
	w4 := &Workflow{Name: "wf", Steps: []Step{{Name: "w", Spec: spec("w"), Prompt: Text("P"), ResumePrompt: Text("接着来")}}}
	run(t, w4, f4)
	if c := f4.calls[0]; c.Opts.Resume != "" || c.Prompt != "P" {
		t.Errorf("non-continuous call = %+v", c)
	}
}

func TestStepEventPayload(t *testing.T) {
	f := newFake()
	w := NewWorkflow([]Step{{Name: "a", Spec: spec("a"), Prompt: Text("p")}, {Name: "b", Spec: spec("b"), Prompt: Text("p")}})
	_, evs := run(t, w, f)
	want := []map[string]any{
		{"index": 0, "total": 2, "resumed": false, "woke": 0},
		{"index": 1, "total": 2, "resumed": false, "woke": 0},
	}
	for i, e := range evs {
		if e.Kind != "step" || !reflect.DeepEqual(e.Data, want[i]) {
			t.Errorf("event %d = %+v", i, e)
		}
	}
}

func TestLineageRemember(t *testing.T) {
	dir := t.TempDir()
	l := NewLineage(dir, "", "wf")
	if err := l.Remember("", "s0"); err != nil || len(l.History("")) != 0 {
		t.Error("an empty step name was remembered")
	}
	l.Remember("a", "s1")
	l.Remember("a", "s1")
	if h := l.History("a"); !reflect.DeepEqual(h, []string{"s1"}) {
		t.Errorf("repeating the latest id = %v", h)
	}
	other := NewLineage(dir, "", "other")
	other.Remember("a", "o1")
	done := make(chan struct{})
	for i := 0; i < 8; i++ {
		go func(i int) {
			NewLineage(dir, "", "wf").Remember("p", "id"+string(rune('a'+i)))
			done <- struct{}{}
		}(i)
	}
	for i := 0; i < 8; i++ {
		<-done
	}
	if n := len(l.History("p")); n != 8 {
		t.Errorf("parallel remember kept %d of 8", n)
	}
	if l.Latest("a") != "s1" || other.Latest("a") != "o1" {
		t.Error("workflows share entries")
	}
	// Workspaces sharing a run dir never see each other's sessions.
	wsA, wsB := NewLineage(dir, "/ws/a", "wf"), NewLineage(dir, "/ws/b", "wf")
	wsA.Remember("确认需求", "a-1")
	if wsB.Latest("确认需求") != "" || l.Latest("确认需求") != "" || wsA.Latest("确认需求") != "a-1" {
		t.Errorf("workspaces share entries: b=%q none=%q a=%q", wsB.Latest("确认需求"), l.Latest("确认需求"), wsA.Latest("确认需求"))
	}
	if rel := NewLineage(dir, ".", "wf"); !filepath.IsAbs(rel.Workspace) {
		t.Errorf("workspace not made absolute: %q", rel.Workspace)
	}
	// The older shape (no workspace) is never read, and a write replaces it.
	legacy := t.TempDir()
	os.WriteFile(filepath.Join(legacy, LineageFile), []byte(`{"starter":{"确认需求":["old"]}}`), 0o600)
	ll := NewLineage(legacy, "/ws/a", "starter")
	if ll.Latest("确认需求") != "" {
		t.Error("a legacy entry without a workspace was read")
	}
	if err := ll.Remember("确认需求", "new"); err != nil || ll.Latest("确认需求") != "new" {
		t.Errorf("remember over a legacy file: %v, %q", err, ll.Latest("确认需求"))
	}
	var nilL *Lineage
	if nilL.Latest("a") != "" || nilL.Remember("a", "b") != nil {
		t.Error("a nil lineage must be a no-op")
	}
}

// TestHostDecidesNotMethods: a Workflow behaves as its Host says. On the
// fake as a Host, the Lineage is written to its run dir under its
// workspace, the step event is recorded and the session callback is
// installed during the step; Bare(the same fake) does none of that
// although the fake has all those methods (the control is the first
// case). A second host on the same run dir with another workspace does not
// continue the first's session, one with the same workspace does.
func TestHostDecidesNotMethods(t *testing.T) {
	runDir, wsA, wsB := t.TempDir(), t.TempDir(), t.TempDir()
	lineage := filepath.Join(runDir, "lineage.json")
	for _, bare := range []bool{true, false} {
		f := newFake()
		f.runDir, f.workspace = runDir, wsA
		var h Host = f
		if bare {
			h = Bare(f)
		}
		w := NewWorkflow([]Step{NewStep("a", spec("a"), Text("p"))})
		c, err := w.Run(t.Context(), h, nil, nil)
		if err != nil || c.Session("a") != "sid-a" {
			t.Fatalf("bare %v: Run = %v, session %q", bare, err, c.Session("a"))
		}
		_, statErr := os.Stat(lineage)
		wrote, recorded, watching := statErr == nil, len(f.recorded) > 0, f.calls[0].Watching
		if wrote == bare || recorded == bare || watching == bare {
			t.Errorf("bare %v: lineage written %v, events recorded %v, session watched %v", bare, wrote, recorded, watching)
		}
	}
	for _, tt := range []struct {
		ws     string
		resume string
	}{{wsB, ""}, {wsA, "sid-a"}} {
		f := newFake()
		f.runDir, f.workspace = runDir, tt.ws
		if _, err := NewWorkflow([]Step{NewStep("a", spec("a"), Text("p"))}).Run(t.Context(), f, nil, nil); err != nil {
			t.Fatal(err)
		}
		if got := f.calls[0].Opts.Resume; got != tt.resume {
			t.Errorf("workspace %s: resume %q, want %q", tt.ws, got, tt.resume)
		}
	}
}
