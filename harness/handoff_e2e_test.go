package harness_test

import (
	"encoding/json"
	"math"
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

// lastUserText is the text of the last user message of a request.
func lastUserText(r scripted.Request) string {
	msgs := r.Messages().Array()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Get("role").String() != "user" {
			continue
		}
		c := msgs[i].Get("content")
		if c.Type == gjson.String {
			return c.String()
		}
		var sb strings.Builder
		for _, b := range c.Array() {
			sb.WriteString(b.Get("text").String())
		}
		return sb.String()
	}
	return ""
}

const handoffDoc = `## 在做什么
Counting the widgets in HANDOFF_TASK.

## 已定结论
The widgets live in widgets.txt.

## 走不通的路
grep over the whole disk was too slow.

## 下一步
NEXT_MARKER: count the lines of widgets.txt.

## 现场
widgets.txt is half read.`

// handoffScript: the main session crosses the handoff level on its first
// reply (a harmless echo), writes the handoff when asked, and the successor
// (routed by its prompt block) either finishes or, with fullAgain, fills up
// once more.
func handoffScript(fullAgain bool) *scripted.Script {
	big := &scripted.Usage{InputTokens: 60_000, OutputTokens: 10}
	echo := &scripted.Block{Name: "Bash", Input: json.RawMessage(`{"command":"echo hi","description":"say hi"}`)}
	writer := func(r scripted.Request) scripted.Reply {
		if strings.Contains(lastUserText(r), "## 下一步") {
			return scripted.Reply{Text: handoffDoc, Usage: &scripted.Usage{InputTokens: 61_000, OutputTokens: 100}}
		}
		return scripted.Reply{Text: "MAIN_CONTINUES", Usage: big}
	}
	successor := scripted.Conversation{Name: "successor", Match: scripted.Match{FirstUser: harness.PromptBlockIntro},
		Replies: []scripted.Reply{{Text: "SUCCESSOR_DONE", Usage: &scripted.Usage{InputTokens: 2_000, OutputTokens: 10}}}}
	if fullAgain {
		successor.Replies = []scripted.Reply{{ToolUse: echo, Usage: big}}
		successor.Func = writer
	}
	return &scripted.Script{Conversations: []scripted.Conversation{
		successor,
		{Name: "main", Replies: []scripted.Reply{{ToolUse: echo, Usage: big}}, Func: writer},
	}}
}

// handoffRun is the bed (handoffScript(fullAgain)), a Runtime with handoff
// on at maxGen generations and a run-dir workbench, and the worker's spec.
func handoffRun(t *testing.T, fullAgain bool, maxGen int) (*testbed.Bed, *harness.Runtime, harness.AgentSpec) {
	t.Helper()
	b := testbed.New(t, handoffScript(fullAgain))
	rt := newRuntime(t, b, func(o *harness.Options) {
		o.Handoff = harness.HandoffPolicy{Enabled: true, Window: 100_000, Headroom: 50_000, MaxGenerations: maxGen}
		o.Workbench = harness.RunDirWorkbench(b.Workspace, o.RunDir)
	})
	spec := harness.NewAgentSpec("worker", "x")
	spec.AllowedTools = []string{"Bash", "Read"}
	return b, rt, spec
}

func TestRun_Handoff(t *testing.T) {
	t.Parallel()
	b, rt, spec := handoffRun(t, false, 2)
	spec.MaxBudgetUSD = 5
	res, err := rt.Run(runCtx(t), spec, "HANDOFF_TASK: count the widgets", harness.RunOptions{StepName: "count"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Text != "SUCCESSOR_DONE" || len(res.Retired) != 1 || res.Retired[0] == res.SessionID || res.SessionID == "" {
		t.Fatalf("result = %+v", res)
	}
	doc := filepath.Join(rt.Workbench().Notes(), "交接-count.md")
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## 在做什么", "Counting the widgets", "## 下一步", "NEXT_MARKER", "## 走不通的路", "## 现场", "## 已定结论"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("handoff document lacks %q:\n%s", want, data)
		}
	}
	var succ []scripted.Request
	for _, r := range b.Model.Requests() {
		if r.Conversation == "successor" {
			succ = append(succ, r)
		}
	}
	if len(succ) == 0 || !strings.Contains(succ[0].FirstUser(), "NEXT_MARKER") || !strings.Contains(succ[0].FirstUser(), doc) {
		t.Fatalf("the successor's first prompt is not the handoff's prompt block: %v", succ)
	}
	if strings.Contains(succ[0].Messages().Raw, "HANDOFF_TASK: count") {
		t.Errorf("the successor session carries the old history")
	}
	var phases []string
	for _, e := range readEvents(t, rt.EventsPath()) {
		if e.Kind == "handoff" {
			phases = append(phases, e.Data["phase"].(string))
			if e.Data["phase"] == "done" && (e.Data["degraded"] != false || e.Data["path"] != doc) {
				t.Errorf("done event = %v", e.Data)
			}
		}
	}
	if strings.Join(phases, ",") != "near,writing,done" {
		t.Errorf("handoff phases = %v, want near,writing,done", phases)
	}
	// The StepResult's counters are the fold of the recorded events: the
	// results' cost plus the writing round's (carried by the done event,
	// its own stream is not recorded); the fresh session's context.
	var results, writing float64
	for _, e := range readEvents(t, rt.EventsPath()) {
		if r, ok := e.Result(); ok {
			results += r.CostUSD
		}
		if h, ok := e.Handoff(); ok && h.Phase == harness.HandoffDone {
			writing = h.CostUSD
		}
	}
	st := harness.Fold(readEvents(t, rt.EventsPath())).Step
	if writing <= 0 || math.Abs(res.CostUSD-(results+writing)) > 1e-9 || st.CostUSD != res.CostUSD || st.Turns != res.NumTurns || st.Context != res.Context {
		t.Errorf("cost %v (results %v + writing round %v), turns %d, context %d; the fold says %+v", res.CostUSD, results, writing, res.NumTurns, res.Context, st)
	}
	if res.Context != 2_000 {
		t.Errorf("context = %d, want the successor's 2000", res.Context)
	}
}

func TestRun_HandoffMaxGenerations(t *testing.T) {
	t.Parallel()
	_, rt, spec := handoffRun(t, true, 1)
	res, err := rt.Run(runCtx(t), spec, "HANDOFF_TASK: count the widgets", harness.RunOptions{StepName: "count"})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || len(res.Retired) != 1 || !strings.Contains(res.Error, "max_generations=1") {
		t.Fatalf("want the max_generations diagnostic: %+v", res)
	}
	if n := len(harness.ArchivedHandoffs(rt.Workbench().Notes())); n != 0 {
		t.Errorf("%d archived handoffs, want 0 (only one was written)", n)
	}
}

func TestRun_Interrupt(t *testing.T) {
	t.Parallel()
	for _, when := range []string{"model answering", "right after init"} {
		t.Run(when, func(t *testing.T) {
			t.Parallel()
			inFlight := make(chan struct{}, 1)
			b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main",
				Func: func(r scripted.Request) scripted.Reply {
					if strings.Contains(lastUserText(r), "STOP_WORDS") {
						return scripted.Reply{Text: "AFTER_INTERRUPT"}
					}
					select {
					case inFlight <- struct{}{}:
					default:
					}
					// Never within the run's deadline: a step that ends at all
					// was cut by the interrupt.
					return scripted.Reply{Text: "TOO_SLOW", DelayMS: 10 * 60_000}
				}}}})
			rt := newRuntime(t, b, nil)
			interrupt := func() {
				if n := rt.Interrupt("STOP_WORDS: use the blue one"); n != 1 {
					t.Errorf("Interrupt reached %d steps, want 1", n)
				}
			}
			var once sync.Once
			onEvent := func(e harness.Event) {
				if when == "right after init" && e.Kind == "init" {
					once.Do(func() { go interrupt() })
				}
			}
			if when == "model answering" {
				go func() {
					select {
					case <-inFlight: // claude waits for the model's answer now
						interrupt()
					case <-time.After(time.Minute):
					}
				}()
			}
			res, err := rt.Run(runCtx(t), harness.NewAgentSpec("plain", "x"), "pick a colour", harness.RunOptions{OnEvent: onEvent})
			if err != nil {
				t.Fatal(err)
			}
			if !res.OK || res.Text != "AFTER_INTERRUPT" || res.Attempts != 1 || len(res.Errors) != 1 || res.Errors[0] != harness.Interrupted {
				t.Fatalf("result = %+v", res)
			}
			reqs := b.Model.Requests()
			last := reqs[len(reqs)-1]
			if !strings.Contains(lastUserText(last), "STOP_WORDS: use the blue one") || !strings.Contains(lastUserText(last), harness.InterruptNote) {
				t.Fatalf("the resumed request's last user message = %q", lastUserText(last))
			}
			if !strings.Contains(last.Messages().Raw, "pick a colour") {
				t.Errorf("the resumed request is not the same session (original prompt missing)")
			}
			if sessionOf(reqs[0]) != sessionOf(last) {
				t.Errorf("sessions differ: %s vs %s", sessionOf(reqs[0]), sessionOf(last))
			}
		})
	}
}

func TestRun_BackgroundSubagentFinalResult(t *testing.T) {
	t.Parallel()
	agent := &scripted.Block{Name: "Agent", Input: json.RawMessage(`{"description":"sub","prompt":"SUB_TASK do it","subagent_type":"worker"}`)}
	b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{
		{Name: "sub", Match: scripted.Match{FirstUser: "SUB_TASK"}, Replies: []scripted.Reply{{Text: "SUB_DONE", DelayMS: 1500}}},
		{Name: "main", Replies: []scripted.Reply{{ToolUse: agent}}, Func: func(r scripted.Request) scripted.Reply {
			if strings.Contains(lastUserText(r), "task-notification") {
				return scripted.Reply{Text: "FINAL_AFTER_SUB"}
			}
			return scripted.Reply{Text: "MAIN_WAITING"}
		}},
	}})
	rt := newRuntime(t, b, nil)
	spec := harness.NewAgentSpec("coordinator", "x")
	spec.AllowedTools = []string{"Agent", "Read"}
	spec.DelegateOnly = true
	spec.Agents = map[string]harness.AgentDefinition{"worker": {Description: "works", Prompt: "You are WORKER", Tools: []string{"Read"}}}
	res, err := rt.Run(runCtx(t), spec, "delegate it", harness.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	results := 0
	for _, e := range readEvents(t, rt.EventsPath()) {
		if e.Kind == "result" {
			results++
		}
	}
	if !res.OK || res.Text != "FINAL_AFTER_SUB" || results != 2 {
		t.Fatalf("want the second result as final (%d results): %+v", results, res)
	}
}

func TestRun_OverflowErrorHandsOffDegraded(t *testing.T) {
	t.Parallel()
	tooLong := scripted.Reply{Fault: &scripted.Fault{Status: 400, Type: "invalid_request_error", Message: "prompt is too long: 210000 tokens > 200000 maximum"}}
	b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{
		{Name: "successor", Match: scripted.Match{FirstUser: harness.PromptBlockIntro}, Replies: []scripted.Reply{{Text: "SUCCESSOR_OK"}}},
		{Name: "main", Func: func(scripted.Request) scripted.Reply { return tooLong }},
	}})
	rt := newRuntime(t, b, func(o *harness.Options) { o.Workbench = harness.RunDirWorkbench(b.Workspace, o.RunDir) })
	res, err := rt.Run(runCtx(t), harness.NewAgentSpec("plain", "x"), "ORIGINAL_TASK_TEXT", harness.RunOptions{StepName: "big"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Text != "SUCCESSOR_OK" || len(res.Retired) != 1 || res.Attempts != 1 {
		t.Fatalf("result = %+v", res)
	}
	data, err := os.ReadFile(filepath.Join(rt.Workbench().Notes(), "交接-big.md"))
	if err != nil || !strings.Contains(string(data), "ORIGINAL_TASK_TEXT") {
		t.Fatalf("degraded handoff lacks the original task in 现场: %s %v", data, err)
	}
	for _, r := range b.Model.RequestsFor("successor") {
		if !strings.Contains(r.FirstUser(), "ORIGINAL_TASK_TEXT") || !strings.Contains(r.FirstUser(), harness.DegradedNote) {
			t.Errorf("successor prompt = %q", r.FirstUser())
		}
	}
}

// TestRun_InterruptInTheHandoffAttempt: a human interrupt that lands in the
// attempt that ends in a handoff (sent as the context crosses the handoff
// level, before flower's own interrupt) reaches the fresh session: its
// first request carries the words after the handoff's prompt block, and an
// interrupt event records them. Control: the same run without the
// interrupt has neither.
func TestRun_InterruptInTheHandoffAttempt(t *testing.T) {
	t.Parallel()
	const words = "STOP_WORDS: count only the red widgets"
	for _, interrupt := range []bool{true, false} {
		t.Run(map[bool]string{true: "interrupted", false: "control"}[interrupt], func(t *testing.T) {
			t.Parallel()
			b, rt, spec := handoffRun(t, false, 2)
			reached := -1
			onEvent := func(e harness.Event) {
				if h, ok := e.Handoff(); ok && h.Phase == harness.HandoffNear && interrupt && reached < 0 {
					reached = rt.Interrupt(words) // still in the attempt that hands off
				}
			}
			res, err := rt.Run(runCtx(t), spec, "HANDOFF_TASK: count the widgets", harness.RunOptions{StepName: "count", OnEvent: onEvent})
			if err != nil {
				t.Fatal(err)
			}
			if !res.OK || res.Text != "SUCCESSOR_DONE" || len(res.Retired) != 1 {
				t.Fatalf("result = %+v", res)
			}
			if interrupt && reached != 1 {
				t.Fatalf("the interrupt reached %d steps, want 1", reached)
			}
			succ := b.Model.RequestsFor("successor")
			if len(succ) == 0 {
				t.Fatal("no successor session")
			}
			first := succ[0].FirstUser()
			var recorded []string
			for _, e := range readEvents(t, rt.EventsPath()) {
				if in, ok := e.Interrupt(); ok {
					recorded = append(recorded, in.Words)
				}
			}
			got := strings.Contains(first, words) && strings.Index(first, "NEXT_MARKER") < strings.Index(first, words)
			if got != interrupt || (len(recorded) == 1 && recorded[0] == words) != interrupt {
				t.Errorf("interrupt %v: the successor's first prompt carries the words: %v; interrupt events %q; prompt:\n%s", interrupt, got, recorded, first)
			}
		})
	}
}

// TestRun_HandoffRoundKeepsMaxTurns: the round that writes the handoff
// lifts only the budget: with the step's max_turns 1, a
// writing round that calls a tool first is cut after that one turn and the
// handoff is degraded. Control: without a turn limit the same round runs
// its tool and writes the full handoff.
func TestRun_HandoffRoundKeepsMaxTurns(t *testing.T) {
	t.Parallel()
	for _, turns := range []int{1, 0} {
		t.Run(map[int]string{1: "max_turns 1", 0: "control"}[turns], func(t *testing.T) {
			t.Parallel()
			echo := &scripted.Block{Name: "Bash", Input: json.RawMessage(`{"command":"echo hi","description":"say hi"}`)}
			big := &scripted.Usage{InputTokens: 60_000, OutputTokens: 10}
			sc := handoffScript(false)
			sc.Conversations[1].Func = func(r scripted.Request) scripted.Reply {
				switch {
				case strings.Contains(lastUserText(r), "## 下一步"):
					return scripted.Reply{ToolUse: echo, Usage: big} // a tool before the handoff
				case strings.Contains(r.Messages().Raw, "## 下一步"):
					return scripted.Reply{Text: handoffDoc, Usage: &scripted.Usage{InputTokens: 61_000, OutputTokens: 100}}
				}
				return scripted.Reply{Text: "MAIN_CONTINUES", Usage: big}
			}
			b := testbed.New(t, sc)
			rt := newRuntime(t, b, func(o *harness.Options) {
				o.Handoff = harness.HandoffPolicy{Enabled: true, Window: 100_000, Headroom: 50_000, MaxGenerations: 2}
				o.Workbench = harness.RunDirWorkbench(b.Workspace, o.RunDir)
			})
			spec := harness.NewAgentSpec("worker", "x")
			spec.AllowedTools = []string{"Bash", "Read"}
			spec.MaxTurns = turns
			res, err := rt.Run(runCtx(t), spec, "HANDOFF_TASK: count the widgets", harness.RunOptions{StepName: "count"})
			if err != nil {
				t.Fatal(err)
			}
			if !res.OK || res.Text != "SUCCESSOR_DONE" || len(res.Retired) != 1 {
				t.Fatalf("result = %+v", res)
			}
			var done []harness.HandoffEvent
			for _, e := range readEvents(t, rt.EventsPath()) {
				if h, ok := e.Handoff(); ok && h.Phase == harness.HandoffDone {
					done = append(done, h)
				}
			}
			if len(done) != 1 || done[0].Degraded != (turns == 1) {
				t.Errorf("max_turns %d: handoff done events %+v, want one, degraded %v", turns, done, turns == 1)
			}
		})
	}
}
