package flow

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flowerhq/flower/harness"
)

const fullBrief = "## 目标\n做计算器\n## 验收标准\n能加减\n## 边界\n不做乘除\n## 未知与假设\n假设用 Go"

func TestClarifyStep(t *testing.T) {
	ch := &fakeChannel{}
	t.Run("incomplete then complete: missing recorded, then frozen and injected", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "notes", "需求.md")
		f := newFake().queue(ClarifyStepName, ok("## 目标\n做计算器", "c1")).queue(ClarifyStepName+"#retry1", ok("好的,这是整理好的需求:\n"+fullBrief, "c2"))
		var missingSeen []string
		s := ClarifyStep(ch, ClarifyStepOptions{BriefPath: path, Prompt: Text("帮我做计算器"), Retries: 1})
		inner := s.Gate
		s.Gate = func(ctx contextT, r harness.StepResult, c Ctx) (bool, error) {
			p, err := inner(ctx, r, c)
			if !p {
				missingSeen, _ = c[MissingKey].([]string)
			}
			return p, err
		}
		c, _ := run(t, NewWorkflow([]Step{s}), f)
		if !reflect.DeepEqual(missingSeen, []string{"验收标准", "边界", "未知与假设"}) {
			t.Errorf("missing = %v", missingSeen)
		}
		if _, has := c[MissingKey]; has {
			t.Error("_missing not popped after the brief was complete")
		}
		b, err := LoadBrief(path)
		if err != nil || !b.Complete() || b.Goal != "做计算器" {
			t.Fatalf("frozen brief = %+v, %v", b, err)
		}
		if got := c[BriefKey].(Brief); !got.equal(b) {
			t.Errorf("ctx brief = %+v", got)
		}
		if c.String(ClarifyStepName) != b.PromptBlock() || strings.Contains(c.String(ClarifyStepName), "好的") {
			t.Errorf("ctx[name] = %q, want the prompt block, not the raw text", c.String(ClarifyStepName))
		}
		if s.ResumeFrom != "" || s.ResumePrompt(nil) != ClarifyResume {
			t.Errorf("resume_from %q, resume_prompt %q", s.ResumeFrom, s.ResumePrompt(nil))
		}
		if !strings.HasPrefix(s.Spec.Instructions, ClarifyRules) || s.Spec.Workbench {
			t.Error("default spec is not clarify()")
		}
	})
	t.Run("complete brief on disk: skipped, still injected in three places", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "需求.md")
		if _, err := ParseBrief(fullBrief).Write(path); err != nil {
			t.Fatal(err)
		}
		f := newFake()
		w := NewWorkflow([]Step{ClarifyStep(ch, ClarifyStepOptions{BriefPath: path, Prompt: Text("x")}),
			{Name: "next", Spec: spec("n"), Prompt: func(c Ctx) string { return c.String(ClarifyStepName) }}})
		w.Context = Ctx{MissingKey: []string{"stale"}}
		c, _ := run(t, w, f)
		if !reflect.DeepEqual(f.labels(), []string{"next"}) || !strings.Contains(f.calls[0].Prompt, "做计算器") {
			t.Errorf("labels = %v, prompt = %q", f.labels(), f.calls[0].Prompt)
		}
		if _, has := c[MissingKey]; has || c[BriefKey] == nil {
			t.Error("skip did not inject")
		}
	})
	t.Run("always_ask runs even with a brief on disk", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "需求.md")
		ParseBrief(fullBrief).Write(path)
		f := newFake().queue(ClarifyStepName, ok(fullBrief, "c"))
		run(t, NewWorkflow([]Step{ClarifyStep(ch, ClarifyStepOptions{BriefPath: path, Prompt: Text("x"), AlwaysAsk: true})}), f)
		if len(f.calls) != 1 {
			t.Errorf("calls = %v", f.labels())
		}
	})
}

func TestGoalStep(t *testing.T) {
	ch := &fakeChannel{}
	goalText := "## 目标\n做计算器\n## 检查清单\n- 能加\n- [此环境无法验证:无 mac] mac 上能跑"
	t.Run("judge reads the brief, goal frozen, task event for unverifiable items", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "目标.md")
		f := newFake().queue(GoalStepName, ok(goalText, "g1"))
		w := NewWorkflow([]Step{GoalStep(ch, GoalStepOptions{GoalPath: path, Role: RoleOptions{CanRun: true}})})
		w.Context = Ctx{ClarifyStepName: "<需求>BRIEF-BLOCK</需求>"}
		c, evs := run(t, w, f)
		if !strings.Contains(f.calls[0].Prompt, "BRIEF-BLOCK") || f.calls[0].Spec != GoalStepName {
			t.Errorf("goal prompt = %q", f.calls[0].Prompt)
		}
		g, err := LoadGoal(path)
		if err != nil || !g.Complete() || len(g.Checks) != 2 {
			t.Fatalf("goal on disk = %+v, %v", g, err)
		}
		if c[GoalKey].(Goal).Statement != "做计算器" || c.String(GoalStepName) != g.PromptBlock() {
			t.Error("goal not injected")
		}
		var task *harness.Event
		for i := range evs {
			if evs[i].Kind == "task" {
				task = &evs[i]
			}
		}
		if task == nil || task.Data["total"] != 2 || task.Data["path"] != path || len(task.Data["unverifiable"].([]string)) != 1 {
			t.Errorf("task event = %+v", task)
		}
	})
	t.Run("can_run via role options gives the judge Bash", func(t *testing.T) {
		s := GoalStep(ch, GoalStepOptions{Role: RoleOptions{CanRun: true}})
		if !strings.Contains(strings.Join(s.Spec.AllowedTools, ","), "Bash") || s.ResumePrompt != nil {
			t.Errorf("spec = %v, resume prompt set = %v", s.Spec.AllowedTools, s.ResumePrompt != nil)
		}
		if s2 := GoalStep(ch, GoalStepOptions{}); strings.Contains(strings.Join(s2.Spec.AllowedTools, ","), "Bash") {
			t.Error("goal judge has Bash without can_run")
		}
	})
	t.Run("complete goal on disk: skipped and injected; always_set re-derives", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "目标.md")
		ParseGoal(goalText).Write(path)
		f := newFake()
		c, evs := run(t, NewWorkflow([]Step{GoalStep(ch, GoalStepOptions{GoalPath: path})}), f)
		if len(f.calls) != 0 || c[GoalKey] == nil || len(evs) != 1 || evs[0].Kind != harness.EventGoal || c[FrozenGoalKey].(FrozenGoal).Goal.Statement != "做计算器" {
			t.Errorf("calls = %v, events = %v", f.labels(), evs)
		}
		f = newFake().queue(GoalStepName, ok("## 目标\n新\n## 检查清单\n- a", "g"))
		run(t, NewWorkflow([]Step{GoalStep(ch, GoalStepOptions{GoalPath: path, AlwaysSet: true})}), f)
		if g, _ := LoadGoal(path); g.Statement != "新" {
			t.Errorf("always_set did not re-derive: %+v", g)
		}
	})
	t.Run("incomplete goal is rejected", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "目标.md")
		f := newFake().queue(GoalStepName, ok("## 目标\n只有目标", "g"))
		c, _ := run(t, NewWorkflow([]Step{GoalStep(ch, GoalStepOptions{GoalPath: path})}), f)
		if c.String(KeyFailed) != GoalStepName {
			t.Errorf("_failed = %q", c.String(KeyFailed))
		}
	})
}

type contextT = context.Context

// The workflow's own events ("step", the goal step's "goal" record and "task" warning)
// go into the runner's record; the callback still sees them.
func TestFlowEventsRecorded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "目标.md")
	f := newFake().queue(GoalStepName, ok(goalText+"\n- [此环境无法验证:无 mac] mac 上能跑", "g1"))
	w := NewWorkflow([]Step{GoalStep(&fakeChannel{}, GoalStepOptions{GoalPath: path})})
	w.Context = Ctx{ClarifyStepName: "<需求>B</需求>"}
	_, evs := run(t, w, f)
	kinds := func(es []harness.Event) (out []string) {
		for _, e := range es {
			if e.Kind == "step" || e.Kind == "task" || e.Kind == "goal" {
				out = append(out, e.Kind+":"+e.Step)
			}
		}
		return out
	}
	want := []string{"step:" + GoalStepName, "goal:" + GoalStepName, "task:" + GoalStepName}
	if got := kinds(f.recorded); !slices.Equal(got, want) {
		t.Errorf("recorded = %v, want %v", got, want)
	}
	if got := kinds(evs); !slices.Equal(got, want) {
		t.Errorf("callback saw %v, want %v", got, want)
	}
	if len(f.recorded) != 3 {
		t.Errorf("recorded %d events; only the workflow's own belong there", len(f.recorded))
	}
	if l := FlowEventLine(f.recorded[2]); !strings.Contains(l, "1 of 3 checks") || !strings.Contains(l, path) {
		t.Errorf("task line = %q", l)
	}
	if l := FlowEventLine(f.recorded[1]); !strings.Contains(l, "frozen") || !strings.Contains(l, path) {
		t.Errorf("goal line = %q", l)
	}
}

// A failed run never freezes a document, even when its text is a complete
// one (a crash mid-answer, max turns): the gate says no and writes nothing.
// Control: the same text from a run that finished is frozen.
func TestFailedRunFreezesNothing(t *testing.T) {
	ch := &fakeChannel{}
	for _, tt := range []struct {
		name string
		step func(path string) Step
		text string
	}{
		{"clarify", func(p string) Step { return ClarifyStep(ch, ClarifyStepOptions{BriefPath: p, Prompt: Text("x")}) }, fullBrief},
		{"goal", func(p string) Step { return GoalStep(ch, GoalStepOptions{GoalPath: p, AlwaysSet: true}) }, goalText},
	} {
		for _, finished := range []bool{false, true} {
			path := filepath.Join(t.TempDir(), "doc.md")
			s := tt.step(path)
			c := Ctx{}
			passed, err := s.Gate(t.Context(), harness.StepResult{OK: finished, Error: "max turns", Text: tt.text, Structured: typedFor(s.Spec, "", tt.text)}, c)
			_, statErr := os.Stat(path)
			if err != nil || passed != finished || (statErr == nil) != finished {
				t.Errorf("%s, finished %v: gate = %v, %v; file written %v", tt.name, finished, passed, err, statErr == nil)
			}
			if _, has := c[FrozenGoalKey]; has != (finished && tt.name == "goal") {
				t.Errorf("%s, finished %v: frozen goal in ctx %v", tt.name, finished, has)
			}
			// Through the workflow too: the failed run fails the step.
			path2 := filepath.Join(t.TempDir(), "doc.md")
			f := newFake().queue(s.Name, harness.StepResult{OK: finished, Error: "API Error: 500", Text: tt.text, SessionID: "s"})
			wc, _ := run(t, NewWorkflow([]Step{tt.step(path2)}), f)
			if _, statErr := os.Stat(path2); (statErr == nil) != finished || (wc.String(KeyFailed) == "") != finished {
				t.Errorf("%s via workflow, finished %v: file written %v, _failed %q", tt.name, finished, statErr == nil, wc.String(KeyFailed))
			}
		}
	}
}
