package flow

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/flowerhq/flower/harness"
)

// call is one Run the fake runner saw.
type call struct {
	Spec     string
	Instr    string // the spec's instructions (rules + caller's)
	Prompt   string
	Opts     harness.RunOptions
	Watching bool // a session callback was installed during this Run
}

// fakeRunner stands in for harness.Runtime: replies are queued per step
// label (exact) or per label prefix; the default reply is OK with session
// "sid-<label>" and text "done".
type fakeRunner struct {
	mu        sync.Mutex
	calls     []call
	replies   map[string][]harness.StepResult
	fn        func(spec harness.AgentSpec, prompt string, opts harness.RunOptions) (harness.StepResult, bool)
	onSession func(string)
	runDir    string
	workspace string
	err       error
	recorded  []harness.Event // Record: the run's record
}

func newFake() *fakeRunner { return &fakeRunner{replies: map[string][]harness.StepResult{}} }

// queue adds replies for a label.
func (f *fakeRunner) queue(label string, rs ...harness.StepResult) *fakeRunner {
	f.replies[label] = append(f.replies[label], rs...)
	return f
}

func (f *fakeRunner) Run(ctx context.Context, spec harness.AgentSpec, prompt string, opts harness.RunOptions) (harness.StepResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call{Spec: spec.Name, Instr: spec.Instructions, Prompt: prompt, Opts: opts, Watching: f.onSession != nil})
	if f.err != nil {
		return harness.StepResult{}, f.err
	}
	if f.fn != nil {
		if r, ok := f.fn(spec, prompt, opts); ok {
			return f.finish(f.typed(spec, prompt, r), opts), nil
		}
	}
	r := harness.StepResult{OK: true, SessionID: "sid-" + opts.StepName, Text: "done"}
	if q := f.replies[opts.StepName]; len(q) > 0 {
		f.replies[opts.StepName], r = q[1:], q[0]
	}
	return f.finish(f.typed(spec, prompt, r), opts), nil
}

// typed gives a reply of a step that asked for a typed value the value its
// Markdown stands for (typedFor), unless it has one or is untyped.
func (f *fakeRunner) typed(spec harness.AgentSpec, prompt string, r harness.StepResult) harness.StepResult {
	switch {
	case string(r.Structured) == "null":
		r.Structured = nil
	case r.Structured == nil && r.OK && spec.JSONSchema != "":
		r.Structured = typedFor(spec, prompt, r.Text)
	}
	return r
}

// untyped marks a fake reply that gives no typed value even though its
// step asked for one (a judge that never called StructuredOutput).
func untyped(r harness.StepResult) harness.StepResult {
	r.Structured = json.RawMessage("null")
	return r
}

// typedFor is the typed value a judge or goal step's fake reply stands for
// when the test gave only its Markdown: the goal ParseGoal reads from it,
// or the verdict ParseVerdict reads, with one check per item of the
// prompt's checklist (all passed when achieved) — as a model that says the
// same thing in both would.
func typedFor(spec harness.AgentSpec, prompt, text string) json.RawMessage {
	var v any
	switch spec.JSONSchema {
	case GoalSchema:
		g := ParseGoal(text)
		if !g.Complete() {
			return nil
		}
		v = typedGoal{Goal: g.Statement, Checklist: g.Checks}
	case VerdictSchema:
		p := ParseVerdict(text)
		t := TypedVerdict{Verdict: p.State, Failed: orNone(p.Failed), Reason: p.Reason, Checks: []VerdictCheck{}}
		if t.Verdict == "" {
			t.Verdict = NotYet
		}
		for _, c := range promptChecklist(prompt) {
			t.Checks = append(t.Checks, VerdictCheck{Check: c, Passed: t.Verdict == Achieved, Evidence: "fake"})
		}
		v = t
	default:
		return nil
	}
	b, _ := json.Marshal(v)
	return b
}

func orNone(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// promptChecklist is the numbered checklist of a judge prompt.
func promptChecklist(prompt string) []string {
	_, rest, _ := strings.Cut(prompt, "<检查清单>\n")
	block, _, _ := strings.Cut(rest, "</检查清单>")
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(block), "\n") {
		if _, item, ok := strings.Cut(l, ". "); ok {
			out = append(out, item)
		}
	}
	return out
}

func (f *fakeRunner) finish(r harness.StepResult, opts harness.RunOptions) harness.StepResult {
	r.Step = opts.StepName
	if r.SessionID == "-" {
		r.SessionID = ""
	}
	if r.SessionID != "" && f.onSession != nil {
		f.onSession(r.SessionID)
	}
	return r
}

func (f *fakeRunner) OnSession(fn func(string)) func() {
	f.onSession = fn
	return func() { f.onSession = nil }
}

func (f *fakeRunner) RunDir() string { return f.runDir }

func (f *fakeRunner) Workspace() string { return f.workspace }

func (f *fakeRunner) Record(ev harness.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.recorded = append(f.recorded, ev)
}

func (f *fakeRunner) labels() []string {
	var out []string
	for _, c := range f.calls {
		out = append(out, c.Opts.StepName)
	}
	return out
}

func (f *fakeRunner) callsFor(prefix string) []call {
	var out []call
	for _, c := range f.calls {
		if strings.HasPrefix(c.Opts.StepName, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// fakeChannel answers from a list; exhausted → timeout.
type fakeChannel struct {
	answers []Answer
	asked   []Question
	amended []string
}

func (c *fakeChannel) ToolName() string      { return "mcp__fake__ask" }
func (c *fakeChannel) InboxToolName() string { return "mcp__fake__inbox" }
func (c *fakeChannel) MCPServers() map[string]any {
	return map[string]any{"fake": map[string]any{"command": "fake"}}
}
func (c *fakeChannel) Ask(_ context.Context, q Question) (Answer, error) {
	c.asked = append(c.asked, q)
	if len(c.answers) == 0 {
		return Answer{State: Timeout}, nil
	}
	a := c.answers[0]
	c.answers = c.answers[1:]
	return a, nil
}
func (c *fakeChannel) SetStep(string) {}
func (c *fakeChannel) Amend(said, label string) (bool, error) {
	c.amended = append(c.amended, fmt.Sprintf("%s:%s", label, said))
	return true, nil
}

func ok(text, sid string) harness.StepResult {
	return harness.StepResult{OK: true, Text: text, SessionID: sid}
}
