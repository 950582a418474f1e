package flow_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	flower "github.com/flowerhq/flower"
	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

const (
	e2eBrief   = "## 目标\n写一个 hello.txt\n## 验收标准\nhello.txt 内容是 hi\n## 边界\n只写这一个文件\n## 未知与假设\n假设用 UTF-8"
	e2eGoal    = "## 目标\n工作区里有 hello.txt\n## 检查清单\n- hello.txt 存在\n- 内容是 hi"
	e2eGoal2   = "## 目标\n工作区里有 hello.txt,还要支持乘法\n## 检查清单\n- hello.txt 存在\n- 支持乘法"
	e2eNotYet  = "## 结论\n未达成\n## 理由\nFEEDBACK-MARK 还缺一个换行\n## 未通过\n- 内容是 hi"
	e2eAchieve = "## 结论\n已达成\n## 理由\n都核对过了\n## 未通过\n无"
)

// lastUser is the text of the request's last user message (text blocks and
// tool results marked "[tool_result]").
func lastUser(r scripted.Request) string { return r.LastUser() }

// typedReply answers a goal or judge request with md and the typed value
// it stands for, as a model that says the same in both would: the goal
// ParseGoal reads, or the verdict ParseVerdict reads with one check per
// item of the request's checklist (passed when achieved).
func typedReply(r scripted.Request, schema, md string) scripted.Reply {
	if schema == flow.GoalSchema {
		g := flow.ParseGoal(md)
		return scripted.GoalReply(md, g.Statement, g.Checks...)
	}
	v := flow.ParseVerdict(md)
	if v.Achieved() {
		return scripted.Achieved(r, md)
	}
	var checks []scripted.Check
	for _, c := range scripted.Checklist(r) {
		checks = append(checks, scripted.Check{Check: c, Evidence: "scripted"})
	}
	state := v.State
	if state == "" {
		state = flow.NotYet
	}
	return scripted.VerdictReply(md, state, checks, v.Failed, v.Reason)
}

func toolUse(name string, input any) scripted.Reply {
	js, _ := json.Marshal(input)
	return scripted.Reply{ToolUse: &scripted.Block{Name: name, Input: js}}
}

// starterScript is the scripted model of the whole starter flow.
func starterScript(ws string, judge []string, goals []string) *scripted.Script {
	var mu sync.Mutex
	next := func(list *[]string) string {
		mu.Lock()
		defer mu.Unlock()
		if len(*list) == 0 {
			return e2eAchieve
		}
		v := (*list)[0]
		*list = (*list)[1:]
		return v
	}
	return &scripted.Script{Conversations: []scripted.Conversation{
		{Name: "worker", Match: scripted.Match{System: "你是执行者"}, Func: func(r scripted.Request) scripted.Reply {
			if strings.Contains(lastUser(r), "[tool_result]") {
				return scripted.Reply{Text: "写好了 " + filepath.Join(ws, "hello.txt") + ",内容 hi。"}
			}
			return toolUse("Write", map[string]any{"file_path": filepath.Join(ws, "hello.txt"), "content": "hi\n"})
		}},
		{Name: "clarify", Match: scripted.Match{System: "你是需求澄清者"}, Func: func(r scripted.Request) scripted.Reply {
			if strings.Contains(lastUser(r), "[tool_result]") {
				return scripted.Reply{Text: e2eBrief}
			}
			return toolUse("mcp__flower__ask", map[string]any{"question": "文件里写什么?", "options": []string{"hi", "hello"}})
		}},
		{Name: "goal", Match: scripted.Match{System: "你是独立评审", FirstUser: "把它变成目标和检查清单"}, Func: func(r scripted.Request) scripted.Reply {
			return typedReply(r, flow.GoalSchema, next(&goals))
		}},
		{Name: "judge", Match: scripted.Match{System: "你是独立评审", FirstUser: "请独立评审"}, Func: func(r scripted.Request) scripted.Reply {
			return typedReply(r, flow.VerdictSchema, next(&judge))
		}},
		{Name: "coordinator", Match: scripted.Match{System: "你是协调者"}, Func: func(r scripted.Request) scripted.Reply {
			lu := lastUser(r)
			switch {
			case strings.Contains(lu, "[tool_result]"):
				return scripted.Reply{Text: "coder 已写好 hello.txt。"}
			case strings.Contains(lu, "独立评审认为"):
				return scripted.Reply{Text: "已按评审意见核对,hello.txt 内容是 hi。"}
			}
			return toolUse("Agent", map[string]any{"description": "写 hello.txt", "subagent_type": "coder", "run_in_background": false,
				"prompt": "目标: 在 " + ws + " 写 hello.txt,内容 hi。验收: 文件存在且内容为 hi。"})
		}},
	}}
}

// placeholder lets testbed.New start; each test then starts its own model,
// whose script needs the bed's workspace path.
var placeholder = &scripted.Script{Conversations: []scripted.Conversation{{Name: "placeholder", Replies: []scripted.Reply{{Text: "x"}}}}}

func newRuntime(t *testing.T, b *testbed.Bed, runDir string, wb *harness.Workbench) *harness.Runtime {
	t.Helper()
	o := harness.NewOptions(b.Workspace)
	flower.Defaults(&o)
	o.RunDir = runDir
	o.Env = b.Env()
	o.Claude = b.Claude
	o.HookPath = testbed.BuildBinary(t, "./cmd/flower-hook")
	o.Workbench = wb
	o.Resilience.BaseDelay = 50 * time.Millisecond
	o.Resilience.MaxDelay = 200 * time.Millisecond
	o.CLIRetries = 0
	rt, err := harness.New(t.Context(), o)
	if err != nil {
		t.Fatalf("harness.New: %v", err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

func runFlow(t *testing.T, wf *flow.Starter, rt *harness.Runtime) flow.Ctx {
	t.Helper()
	c, err := wf.Run(t.Context(), rt, func(e harness.Event) {
		if e.Kind == "step" || e.Kind == "task" || e.Kind == "error" {
			t.Logf("event %s %s %v", e.Kind, e.Step, e.Data)
		}
	}, func(s flow.Step, r harness.StepResult) {
		t.Logf("step %s: ok=%v session=%s error=%q text=%q", s.Name, r.OK, r.SessionID, r.Error, clip(r.Text))
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return c
}

// runStarter runs the starter flow for sentence with o on bed's real CLI
// (closing it when the test ends) and wants a successful outcome.
func runStarter(t *testing.T, bed *testbed.Bed, sentence string, o flow.StarterOptions) (flow.Ctx, *flow.Starter) {
	t.Helper()
	wf, err := flow.StarterFlow(sentence, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wf.Close() })
	c := runFlow(t, wf, newRuntime(t, bed, o.RunDir, wf.Workbench))
	if err := c.Outcome(); err != nil {
		t.Fatalf("outcome of %q: %v", sentence, err)
	}
	return c, wf
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200]
	}
	return s
}

// starterBed is a bed whose scripted model plays the starter flow (judge
// and goal replies in order) and the starter's options on it: the clarifier's
// question answered "hi" from a file, the channel on the built flower.
func starterBed(t *testing.T, judge, goals []string) (*testbed.Bed, *scripted.Server, flow.StarterOptions) {
	t.Helper()
	bed := testbed.New(t, placeholder)
	srv, err := scripted.Start(starterScript(bed.Workspace, judge, goals), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	bed.Model = srv
	answersPath := filepath.Join(t.TempDir(), "answers.txt")
	os.WriteFile(answersPath, []byte("hi\n"), 0o600)
	fa, err := flow.LoadFileAnswers(answersPath)
	if err != nil {
		t.Fatal(err)
	}
	return bed, srv, flow.StarterOptions{Workspace: bed.Workspace, RunDir: filepath.Join(filepath.Dir(bed.Workspace), "runs"),
		Answerer: fa, Timeout: 10 * time.Second, ChannelCommand: []string{testbed.BuildBinary(t, "./cmd/flower"), "mcp-channel"}}
}

// The whole starter flow on the real CLI, then a wake with a new sentence.
func TestE2EStarterFlowAndWake(t *testing.T) {
	t.Parallel()
	bed, srv, o := starterBed(t, []string{e2eNotYet, e2eAchieve, e2eAchieve}, []string{e2eGoal, e2eGoal2})
	runDir := o.RunDir
	c, wf := runStarter(t, bed, "帮我写个 hello.txt", o)

	// The clarifier asked once through the MCP ask tool, answered from the file.
	asked := false
	for _, r := range srv.RequestsFor("clarify") {
		for _, tr := range r.ToolResults() {
			if strings.Contains(tr.Content, "[answered] hi") {
				asked = true
			}
		}
	}
	if !asked {
		t.Errorf("the clarifier never got the file's answer through the ask tool; clarify requests: %d", len(srv.RequestsFor("clarify")))
	}
	notes := wf.Workbench.Notes()
	if log, _ := os.ReadFile(filepath.Join(notes, "问答记录.md")); !strings.Contains(string(log), "文件里写什么?") || !strings.Contains(string(log), "[answered]: hi") {
		t.Errorf("问答记录.md = %q", log)
	}
	// Brief frozen, goal written by the judge.
	if b, err := flow.LoadBrief(filepath.Join(notes, "需求.md")); err != nil || !b.Complete() {
		t.Errorf("需求.md = %+v, %v", b, err)
	}
	if g, err := flow.LoadGoal(filepath.Join(notes, "目标.md")); err != nil || len(g.Checks) != 2 {
		t.Errorf("目标.md = %+v, %v", g, err)
	}
	// The coordinator delegated to a worker subagent that wrote the file.
	if data, err := os.ReadFile(filepath.Join(bed.Workspace, "hello.txt")); err != nil || string(data) != "hi\n" {
		t.Errorf("hello.txt = %q, %v", data, err)
	}
	if len(srv.RequestsFor("worker")) == 0 {
		t.Error("no worker subagent request")
	}
	// Not yet once: round 2 carries the feedback in the same session.
	var round2 *scripted.Request
	for _, r := range srv.RequestsFor("coordinator") {
		if strings.Contains(lastUser(r), "FEEDBACK-MARK") {
			r := r
			round2 = &r
			break
		}
	}
	if round2 == nil {
		t.Fatal("no coordinator request carried the judge's feedback")
	}
	if !strings.Contains(round2.FirstUser(), "按下面确认过的需求完成任务") || !strings.Contains(round2.Text(), "coder 已写好 hello.txt") {
		t.Errorf("round 2 is not the same session: first user %q", clip(round2.FirstUser()))
	}
	if n := len(srv.RequestsFor("judge")); n != 2 {
		t.Errorf("judge requests = %d, want 2 (not yet, achieved)", n)
	}
	firstWork, _ := c.Result(flow.WorkStepName)
	if firstWork.SessionID == "" || c.Session(flow.WorkStepName) != firstWork.SessionID {
		t.Errorf("work session = %q", firstWork.SessionID)
	}

	// Second invocation with a new sentence: wake.
	state, err := flow.WakeState(bed.Workspace, flow.WakeStateOptions{RunDir: runDir})
	if err != nil || !state.Wake {
		t.Fatalf("wake state = %+v, %v", state, err)
	}
	before := len(srv.Requests())
	runStarter(t, bed, "还要支持乘法", o)
	if b, _ := flow.LoadBrief(filepath.Join(notes, "需求.md")); !strings.Contains(b.Goal, "还要支持乘法") {
		t.Errorf("the sentence is not in the brief: %q", b.Goal)
	}
	if g, _ := flow.LoadGoal(filepath.Join(notes, "目标.md")); !strings.Contains(g.Statement, "支持乘法") {
		t.Errorf("the goal was not re-derived: %+v", g)
	}
	var goalSaw, coordSaw, clarified bool
	for _, r := range srv.Requests()[before:] {
		switch r.Conversation {
		case "goal":
			goalSaw = goalSaw || strings.Contains(lastUser(r), "还要支持乘法")
		case "coordinator":
			coordSaw = coordSaw || strings.Contains(lastUser(r), "【唤醒时追加】") && strings.Contains(lastUser(r), "还要支持乘法")
		case "clarify":
			clarified = true
		}
	}
	if !goalSaw || !coordSaw || clarified {
		t.Errorf("wake: goal judge saw it %v, coordinator saw it %v, clarify ran again %v", goalSaw, coordSaw, clarified)
	}
}

// Unattended: the clarifier's ask returns at once with a timeout answer.
func TestE2EUnattendedAsk(t *testing.T) {
	t.Parallel()
	bed := testbed.New(t, placeholder)
	srv, err := scripted.Start(starterScript(bed.Workspace, nil, nil), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	bed.Model = srv
	runDir := filepath.Join(filepath.Dir(bed.Workspace), "runs")
	o := flow.StarterOptions{Workspace: bed.Workspace, RunDir: runDir, ClarifyOnly: true,
		Timeout: flow.NoWait, ChannelCommand: []string{testbed.BuildBinary(t, "./cmd/flower"), "mcp-channel"}}
	start := time.Now()
	runStarter(t, bed, "帮我写个 hello.txt", o)
	if d := time.Since(start); d > 60*time.Second {
		t.Errorf("unattended clarify took %v", d)
	}
	got := ""
	for _, r := range srv.RequestsFor("clarify") {
		for _, tr := range r.ToolResults() {
			got += tr.Content
		}
	}
	if !strings.Contains(got, "[timeout]") {
		t.Errorf("ask tool result = %q, want a timeout answer", got)
	}
}
