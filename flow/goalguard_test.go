package flow

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/flowerhq/flower/harness"
)

const (
	vAchieved    = "## 结论\n已达成\n## 理由\n都对\n## 未通过\n无"
	vNotYet      = "## 结论\n未达成\n## 理由\n缺测试\n## 未通过\n- 有测试"
	vUnreachable = "## 结论\n无法验证\n## 理由\n要 macOS"
	vAmbiguous   = "看起来还行吧"
	// untypedMark opens a verdict the fake judge gives as Markdown only,
	// never calling StructuredOutput.
	untypedMark = "untyped:"
)

// guarded builds a workflow of one work step under the goal guard whose
// judge answers the given verdict texts in order.
func guarded(t *testing.T, ch Channel, goalPath string, verdicts ...string) (*Workflow, *fakeRunner) {
	t.Helper()
	f := newFake()
	for i, v := range verdicts {
		r := ok(v, "judge-"+itoa(i+1))
		if md, cut := strings.CutPrefix(v, untypedMark); cut {
			r = untyped(ok(md, "judge-"+itoa(i+1)))
		}
		f.queue("执行-评审#"+itoa(i+1), r)
	}
	work := Step{Name: "执行", Spec: spec("协调者"), Prompt: Text("干活")}
	w := NewWorkflow([]Step{WithGoal(work, ch, WithGoalOptions{GoalPath: goalPath, Rounds: 3})})
	w.Context = Ctx{GoalKey: Goal{Statement: "做 X", Checks: []string{"有测试"}}}
	return w, f
}

func itoa(i int) string { return string(rune('0' + i)) }

// runLabels runs w on f and wants the runner to have seen the labels want.
func runLabels(t *testing.T, w *Workflow, f *fakeRunner, want []string) Ctx {
	t.Helper()
	c, err := w.Run(t.Context(), f, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.labels(), want) {
		t.Errorf("labels = %v, want %v", f.labels(), want)
	}
	return c
}

// Every branch of with_goal's gate.
func TestWithGoalGate(t *testing.T) {
	opt := func(s string) Answer { return Answer{State: Answered, Text: s} }
	tests := []struct {
		name       string
		verdicts   []string
		answers    []Answer
		wantLabels []string
		wantPassed bool
		wantAbort  string
		check      func(t *testing.T, c Ctx, f *fakeRunner, ch *fakeChannel, goalPath string)
	}{
		{name: "6. achieved → pass", verdicts: []string{vAchieved},
			wantLabels: []string{"执行", "执行-评审#1"}, wantPassed: true},
		{name: "7. not yet → reject, same session resumes with feedback", verdicts: []string{vNotYet, vAchieved},
			wantLabels: []string{"执行", "执行-评审#1", "执行#round2", "执行-评审#2"}, wantPassed: true,
			check: func(t *testing.T, c Ctx, f *fakeRunner, _ *fakeChannel, _ string) {
				r2 := f.callsFor("执行#round2")[0]
				if r2.Opts.Resume != "sid-执行" || r2.Opts.Fork || !strings.Contains(r2.Prompt, "缺测试") || !strings.Contains(r2.Prompt, "- 有测试") {
					t.Errorf("round 2 = %+v", r2)
				}
				if c[RoundKey] != 2 {
					t.Errorf("_round = %v", c[RoundKey])
				}
			}},
		{name: "7. ambiguity is not achieved", verdicts: []string{vAmbiguous, vAmbiguous, vAmbiguous},
			wantLabels: []string{"执行", "执行-评审#1", "执行#round2", "执行-评审#2", "执行#round3", "执行-评审#3"}},
		{name: "7. no typed verdict (Markdown 已达成 only) is no verdict, said so", verdicts: []string{untypedMark + vAchieved, untypedMark + vAchieved, untypedMark + vAchieved},
			wantLabels: []string{"执行", "执行-评审#1", "执行#round2", "执行-评审#2", "执行#round3", "执行-评审#3"},
			check: func(t *testing.T, c Ctx, f *fakeRunner, _ *fakeChannel, _ string) {
				v := c[VerdictKey].(Verdict)
				if v.Achieved() || !strings.Contains(v.Reason, "评审没有给出判定") || v.Document != vAchieved {
					t.Errorf("verdict = %+v", v)
				}
				if !strings.Contains(f.callsFor("执行#round2")[0].Prompt, "评审没有给出判定") {
					t.Error("the no-verdict reason is not fed back")
				}
			}},
		{name: "9. unreachable, nobody answers → StepAbort", verdicts: []string{vUnreachable},
			answers: []Answer{{State: Timeout}}, wantLabels: []string{"执行", "执行-评审#1"}, wantAbort: "没有人回答"},
		{name: "9. unreachable, refused → StepAbort", verdicts: []string{vUnreachable},
			answers: []Answer{{State: Refused, Text: "x"}}, wantLabels: []string{"执行", "执行-评审#1"}, wantAbort: "没有人回答"},
		{name: "10. unreachable, accept → pass", verdicts: []string{vUnreachable},
			answers: []Answer{opt(OptionAccept)}, wantLabels: []string{"执行", "执行-评审#1"}, wantPassed: true,
			check: func(t *testing.T, _ Ctx, _ *fakeRunner, ch *fakeChannel, _ string) {
				if q := ch.asked[0]; !reflect.DeepEqual(q.Options, []string{OptionAccept, OptionChangeGoal, OptionJudgeWrong}) || !strings.Contains(q.Text, "要 macOS") {
					t.Errorf("question = %+v", q)
				}
			}},
		{name: "10. unreachable, option number 1 → pass", verdicts: []string{vUnreachable},
			answers: []Answer{opt("1")}, wantLabels: []string{"执行", "执行-评审#1"}, wantPassed: true},
		{name: "11. unreachable, change goal → amend, write, ctx, reject", verdicts: []string{vUnreachable, vAchieved},
			answers: []Answer{opt(OptionChangeGoal), opt("只要 Linux 能跑")}, wantPassed: true,
			wantLabels: []string{"执行", "执行-评审#1", "执行#round2", "执行-评审#2"},
			check: func(t *testing.T, c Ctx, f *fakeRunner, ch *fakeChannel, goalPath string) {
				g := c[GoalKey].(Goal)
				if !strings.Contains(g.Statement, "只要 Linux 能跑") {
					t.Errorf("ctx goal = %+v", g)
				}
				disk, err := LoadGoal(goalPath)
				if err != nil || !strings.Contains(disk.Statement, "只要 Linux 能跑") || !reflect.DeepEqual(disk.Checks, []string{"有测试"}) {
					t.Errorf("goal file = %+v, %v", disk, err)
				}
				if len(ch.asked) != 2 || !strings.Contains(f.callsFor("执行-评审#2")[0].Prompt, "只要 Linux 能跑") {
					t.Error("the next judge round does not see the amended goal")
				}
				if !strings.Contains(f.callsFor("执行#round2")[0].Prompt, "只要 Linux 能跑") {
					t.Error("the worker is not told the goal changed")
				}
			}},
		{name: "11. change goal but no new goal → StepAbort", verdicts: []string{vUnreachable},
			answers: []Answer{opt("2")}, wantLabels: []string{"执行", "执行-评审#1"}, wantAbort: "没有人给出新目标"},
		{name: "12. free text → the judge was wrong, reason recorded, reject", verdicts: []string{vUnreachable, vAchieved},
			answers: []Answer{opt("容器里装了 darling,能跑 mac 程序")}, wantPassed: true,
			wantLabels: []string{"执行", "执行-评审#1", "执行#round2", "执行-评审#2"},
			check: func(t *testing.T, _ Ctx, f *fakeRunner, _ *fakeChannel, _ string) {
				if !strings.Contains(f.callsFor("执行#round2")[0].Prompt, "人认为评审判错了: 容器里装了 darling") {
					t.Errorf("round 2 prompt = %q", f.callsFor("执行#round2")[0].Prompt)
				}
			}},
		{name: "rounds cap: 3 rounds of not yet fail the step", verdicts: []string{vNotYet, vNotYet, vNotYet},
			wantLabels: []string{"执行", "执行-评审#1", "执行#round2", "执行-评审#2", "执行#round3", "执行-评审#3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := &fakeChannel{answers: tt.answers}
			goalPath := filepath.Join(t.TempDir(), "目标.md")
			w, f := guarded(t, ch, goalPath, tt.verdicts...)
			c := runLabels(t, w, f, tt.wantLabels)
			if passed := c.String(KeyFailed) == ""; passed != tt.wantPassed {
				t.Errorf("passed = %v, want %v", passed, tt.wantPassed)
			}
			if !strings.Contains(c.Aborted(), tt.wantAbort) || (tt.wantAbort == "") != (c.Aborted() == "") {
				t.Errorf("_aborted = %q, want %q", c.Aborted(), tt.wantAbort)
			}
			// 4. the judge is a fresh session every round, never in lineage.
			for _, j := range f.callsFor("执行-评审#") {
				if j.Opts.Resume != "" || j.Opts.Fork || j.Watching || j.Spec != "执行-评审" {
					t.Errorf("judge call = %+v", j)
				}
			}
			if tt.check != nil {
				tt.check(t, c, f, ch, goalPath)
			}
		})
	}
}

// 1. No runtime in ctx: StepAbort, never a pretended pass.
func TestWithGoalNoRuntime(t *testing.T) {
	s := WithGoal(Step{Name: "w"}, nil, WithGoalOptions{})
	passed, err := s.Gate(t.Context(), harness.StepResult{OK: true}, Ctx{})
	if passed || !IsAbort(err) || !strings.Contains(err.Error(), "Runtime") {
		t.Errorf("gate = %v, %v", passed, err)
	}
}

// Unreachable with no channel at all: abort too.
func TestWithGoalUnreachableNoChannel(t *testing.T) {
	f := newFake().queue("w-评审#1", ok(vUnreachable, "j"))
	s := WithGoal(Step{Name: "w"}, nil, WithGoalOptions{})
	passed, err := s.Gate(t.Context(), harness.StepResult{OK: true}, Ctx{KeyRuntime: Runner(f)})
	if passed || !IsAbort(err) {
		t.Errorf("gate = %v, %v", passed, err)
	}
}

// 3. Goal source: a complete ctx goal, else the file, else empty.
func TestWithGoalGoalSource(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "目标.md")
	if _, err := (Goal{Statement: "FILE-GOAL", Checks: []string{"c"}}).Write(path); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		ctx  Ctx
		path string
		want string
	}{
		{"complete ctx goal wins", Ctx{GoalKey: Goal{Statement: "CTX-GOAL", Checks: []string{"c"}}}, path, "CTX-GOAL"},
		{"incomplete ctx goal → file", Ctx{GoalKey: Goal{Statement: "CTX-GOAL"}}, path, "FILE-GOAL"},
		{"no file → empty goal", Ctx{}, filepath.Join(dir, "none.md"), "(未填)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake().queue("w-评审#1", ok(vAchieved, "j"))
			tt.ctx[KeyRuntime] = Runner(f)
			s := WithGoal(Step{Name: "w"}, nil, WithGoalOptions{GoalPath: tt.path})
			if passed, err := s.Gate(t.Context(), harness.StepResult{OK: true, Text: "我做完了"}, tt.ctx); !passed || err != nil {
				t.Fatalf("gate = %v, %v", passed, err)
			}
			p := f.calls[0].Prompt
			if !strings.Contains(p, tt.want) || !strings.Contains(p, "我做完了") {
				t.Errorf("judge prompt lacks %q:\n%s", tt.want, p)
			}
		})
	}
}

// The dataclasses.replace lesson: only Retries, Gate and OnReject change.
func TestWithGoalKeepsEveryField(t *testing.T) {
	orig := Step{
		Name: "w", Spec: spec("s"), Prompt: Text("p"), ResumeFrom: "r", Fork: true, Retries: 9,
		Gate: pass, OnFail: OnFailContinue, When: func(Ctx) bool { return true },
		OnReject: func(harness.StepResult, Ctx) string { return "old" }, ResumePrompt: Text("rp"),
		Reduce: func(harness.StepResult, Ctx) string { return "red" },
	}
	for _, tt := range []struct{ rounds, retries int }{{0, 2}, {1, 0}, {3, 2}, {5, 4}} {
		got := WithGoal(orig, nil, WithGoalOptions{Rounds: tt.rounds})
		if got.Retries != tt.retries {
			t.Errorf("rounds %d: Retries = %d, want %d", tt.rounds, got.Retries, tt.retries)
		}
		ov, gv := reflect.ValueOf(orig), reflect.ValueOf(got)
		for i := 0; i < ov.NumField(); i++ {
			name := ov.Type().Field(i).Name
			switch name {
			case "Retries", "Gate", "OnReject":
				continue
			}
			a, b := ov.Field(i), gv.Field(i)
			if a.Kind() == reflect.Func {
				if a.Pointer() != b.Pointer() {
					t.Errorf("field %s lost", name)
				}
			} else if !reflect.DeepEqual(a.Interface(), b.Interface()) {
				t.Errorf("field %s changed", name)
			}
		}
		if got.OnReject(harness.StepResult{}, Ctx{}) != "" {
			t.Error("on_reject without a verdict must be empty (fresh attempt)")
		}
	}
}

var _ = context.Background

// failedRun is a judge run that did not finish, whose text would read as
// achieved if it were parsed.
func failedRun(errText string) harness.StepResult {
	return harness.StepResult{OK: false, Error: errText, Text: vAchieved, SessionID: "judge-x"}
}

// A failed judge run is no verdict: the round is not yet, with the error as
// the reason fed back; after the last round the step fails. Control: the
// same text from a run that finished passes at once.
func TestWithGoalFailedJudgeIsNoVerdict(t *testing.T) {
	tests := []struct {
		name       string
		judge      []harness.StepResult
		wantLabels []string
		wantPassed bool
		wantReason string
	}{
		{"API error every round → not achieved", []harness.StepResult{failedRun("API Error: 400 bad thing"), failedRun("API Error: 400 bad thing"), failedRun("API Error: 400 bad thing")},
			[]string{"执行", "执行-评审#1", "执行#round2", "执行-评审#2", "执行#round3", "执行-评审#3"}, false, "400 bad thing"},
		{"max turns, then a crash", []harness.StepResult{failedRun("max turns reached"), failedRun("claude exited: signal: killed"), failedRun("")},
			[]string{"执行", "执行-评审#1", "执行#round2", "执行-评审#2", "执行#round3", "执行-评审#3"}, false, "评审没有正常结束"},
		{"not yet twice, then a failed run", []harness.StepResult{ok(vNotYet, "j1"), ok(vNotYet, "j2"), failedRun("API Error: 500")},
			[]string{"执行", "执行-评审#1", "执行#round2", "执行-评审#2", "执行#round3", "执行-评审#3"}, false, "API Error: 500"},
		{"control: a failed round, then typed not yet: a verdict", []harness.StepResult{failedRun("API Error: 500"), ok(vNotYet, "j2"), ok(vNotYet, "j3")},
			[]string{"执行", "执行-评审#1", "执行#round2", "执行-评审#2", "执行#round3", "执行-评审#3"}, false, "缺测试"},
		{"a failed round, then achieved", []harness.StepResult{failedRun("API Error: 529 overloaded"), ok(vAchieved, "j2")},
			[]string{"执行", "执行-评审#1", "执行#round2", "执行-评审#2"}, true, ""},
		{"control: the same text from a finished run", []harness.StepResult{{OK: true, Text: failedRun("x").Text, SessionID: "j"}},
			[]string{"执行", "执行-评审#1"}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, f := guarded(t, &fakeChannel{}, filepath.Join(t.TempDir(), "目标.md"))
			for i, r := range tt.judge {
				f.queue("执行-评审#"+itoa(i+1), r)
			}
			c := runLabels(t, w, f, tt.wantLabels)
			v, _ := c[VerdictKey].(Verdict)
			if passed := c.String(KeyFailed) == ""; passed != tt.wantPassed || v.Achieved() != tt.wantPassed {
				t.Fatalf("passed = %v, verdict %+v; want passed %v", passed, v, tt.wantPassed)
			}
			if tt.wantPassed {
				if v.JudgeFailed != "" {
					t.Errorf("control: a round with a verdict says its judge failed: %q", v.JudgeFailed)
				}
				return
			}
			last := tt.judge[len(tt.judge)-1]
			if want := strings.TrimSpace(last.Error); last.OK && v.JudgeFailed != "" || !last.OK && (v.JudgeFailed == "" || want != "" && v.JudgeFailed != want) {
				t.Errorf("the last round's judge OK %v, but JudgeFailed = %q (want %q)", last.OK, v.JudgeFailed, want)
			}
			if v.State != NotYet || !strings.Contains(v.Reason, tt.wantReason) || c.Aborted() != "" {
				t.Errorf("verdict = %+v, aborted %q; want not_yet with %q", v, c.Aborted(), tt.wantReason)
			}
			if err := c.Outcome(); err == nil || err.(*StepError).ExitCode() != 1 {
				t.Errorf("outcome = %v, want exit 1", err)
			}
			if fb := f.callsFor("执行#round2")[0].Prompt; !strings.Contains(fb, "评审") || !strings.Contains(fb, "未达成") {
				t.Errorf("round 2 is not told the round was not achieved: %q", fb)
			}
		})
	}
}

// The goal is frozen: the goal step's goal is what every round's judge is
// given, even when the file on disk is forged between rounds (by Bash,
// which no guard can read); the forgery is reported once, as Event("goal")
// {state "changed"}. Control: without a forgery, no such event.
func TestWithGoalJudgesTheFrozenGoal(t *testing.T) {
	for _, forge := range []bool{true, false} {
		t.Run(map[bool]string{true: "forged", false: "control: untouched"}[forge], func(t *testing.T) {
			goalPath := filepath.Join(t.TempDir(), "notes", "目标.md")
			f := newFake().queue(GoalStepName, ok("## 目标\nFROZEN-GOAL 做计算器\n## 检查清单\n- 能加", "g"))
			for i, v := range []string{vNotYet, vNotYet, vAchieved} {
				f.queue("执行-评审#"+itoa(i+1), ok(v, "judge-"+itoa(i+1)))
			}
			f.fn = func(_ harness.AgentSpec, _ string, opts harness.RunOptions) (harness.StepResult, bool) {
				if forge && strings.HasPrefix(opts.StepName, "执行") && !strings.Contains(opts.StepName, "评审") {
					os.WriteFile(goalPath, []byte("## 目标\nFORGED 随便\n## 检查清单\n- [x] 无\n- 随便"+opts.StepName), 0o600)
				}
				return harness.StepResult{}, false
			}
			ch := &fakeChannel{}
			work := Step{Name: "执行", Spec: spec("协调者"), Prompt: Text("干活")}
			w := NewWorkflow([]Step{GoalStep(ch, GoalStepOptions{GoalPath: goalPath, AlwaysSet: true}),
				WithGoal(work, ch, WithGoalOptions{GoalPath: goalPath, Rounds: 3})})
			c, evs := run(t, w, f)
			if c.String(KeyFailed) != "" {
				t.Fatalf("failed at %s", c.String(KeyFailed))
			}
			judged := f.callsFor("执行-评审#")
			if len(judged) != 3 {
				t.Fatalf("judge rounds = %d", len(judged))
			}
			for _, j := range judged {
				if !strings.Contains(j.Prompt, "FROZEN-GOAL") || strings.Contains(j.Prompt, "FORGED") {
					t.Errorf("%s was not given the frozen goal:\n%s", j.Opts.StepName, j.Prompt)
				}
			}
			var frozen, changed []harness.GoalEvent
			for _, e := range evs {
				if g, ok := e.Goal(); ok && g.State == harness.GoalFrozen {
					frozen = append(frozen, g)
				} else if ok {
					changed = append(changed, g)
				}
			}
			fz := c[FrozenGoalKey].(FrozenGoal)
			if len(frozen) != 1 || frozen[0].SHA256 != fz.SHA256 || !strings.Contains(frozen[0].Text, "FROZEN-GOAL") || frozen[0].Path != goalPath {
				t.Errorf("frozen events = %+v", frozen)
			}
			disk, _ := os.ReadFile(goalPath)
			if forge != strings.Contains(string(disk), "FORGED") {
				t.Fatalf("forge %v, disk %q", forge, disk) // the forgery did (or did not) land
			}
			switch {
			case forge && (len(changed) != 1 || changed[0].SHA256 != fz.SHA256 || changed[0].DiskSHA256 == fz.SHA256 || changed[0].DiskSHA256 == ""):
				t.Errorf("changed events = %+v, want one naming both hashes", changed)
			case !forge && len(changed) != 0:
				t.Errorf("changed events without a forgery: %+v", changed)
			}
		})
	}
}

// A goal amended by the person (unreachable → change the goal) is frozen
// anew: the next round is given it and the file it wrote is no forgery.
func TestWithGoalAmendRefreezes(t *testing.T) {
	goalPath := filepath.Join(t.TempDir(), "目标.md")
	w, f := guarded(t, &fakeChannel{answers: []Answer{{State: Answered, Text: OptionChangeGoal}, {State: Answered, Text: "只要 Linux"}}},
		goalPath, vUnreachable, vAchieved)
	c, evs := run(t, w, f)
	if c.String(KeyFailed) != "" || !strings.Contains(c[FrozenGoalKey].(FrozenGoal).Goal.Statement, "只要 Linux") {
		t.Fatalf("failed %q, frozen %+v", c.String(KeyFailed), c[FrozenGoalKey])
	}
	for _, e := range evs {
		if g, ok := e.Goal(); ok && g.State == harness.GoalChanged {
			t.Errorf("the person's amendment was reported as a forgery: %+v", g)
		}
	}
}

// A goal a caller loaded itself (no goal step) is frozen as its file reads,
// so a hand-written file is no forgery; the file changed after that is one.
func TestWithGoalFreezesACallersGoal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "目标.md")
	os.WriteFile(path, []byte("目标: 手写的目标\n检查清单:\n* 能加\n"), 0o600)
	g, err := LoadGoal(path)
	if err != nil || !g.Complete() {
		t.Fatalf("goal = %+v, %v", g, err)
	}
	var evs []harness.Event
	f := newFake().queue("w-评审#1", ok(vNotYet, "j1")).queue("w-评审#2", ok(vNotYet, "j2"))
	c := Ctx{GoalKey: g, KeyRuntime: Runner(f), KeyOnEvent: func(e harness.Event) { evs = append(evs, e) }}
	s := WithGoal(Step{Name: "w"}, nil, WithGoalOptions{GoalPath: path})
	changed := func() (n int) {
		for _, e := range evs {
			if ge, ok := e.Goal(); ok && ge.State == harness.GoalChanged {
				n++
			}
		}
		return n
	}
	s.Gate(t.Context(), harness.StepResult{OK: true}, c)
	if changed() != 0 {
		t.Errorf("the caller's own file was reported as changed: %+v", evs)
	}
	os.WriteFile(path, []byte("目标: 随便\n检查清单:\n* 无所谓\n"), 0o600)
	s.Gate(t.Context(), harness.StepResult{OK: true}, c)
	if changed() != 1 || !strings.Contains(f.calls[1].Prompt, "手写的目标") {
		t.Errorf("after a change: %d reports, judge prompt %q", changed(), f.calls[1].Prompt)
	}
}
