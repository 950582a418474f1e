package flow

import (
	"context"
	"fmt"

	"github.com/flowerhq/flower/harness"
)

// Workflow runs Steps in order and hands state between them through a Ctx.
// Build it with NewWorkflow to get the defaults (Name "workflow",
// Continuous true); the zero value has Continuous false.
type Workflow struct {
	Steps []Step
	Name  string
	// Context is copied into every run's fresh Ctx (so a Workflow can run
	// twice).
	Context Ctx
	// Channel and Workbench are handed to steps as ctx["_channel"] and
	// ctx["_workbench"].
	Channel   Channel
	Workbench *harness.Workbench
	// Continuous: a step without ResumeFrom whose name has a session in the
	// Lineage (from an earlier process) continues that session, with
	// ResumePrompt instead of Prompt when it has one.
	Continuous bool
	// Lineage overrides where sessions are remembered across processes;
	// nil: <run_dir>/lineage.json of the Host's RunDir, keyed by its
	// Workspace (none when RunDir is "").
	Lineage *Lineage
}

// NewWorkflow is the positional form: NewWorkflow(steps) with Name
// "workflow" and Continuous true.
func NewWorkflow(steps []Step) *Workflow {
	return &Workflow{Steps: steps, Name: "workflow", Continuous: true}
}

// validOnFail reports whether v is one of the three OnFail values.
func validOnFail(v string) bool {
	return v == "" || v == OnFailStop || v == OnFailContinue || v == OnFailRaise
}

// Run executes the steps in order and returns the final ctx. For each step:
// When may skip it; the start is announced as Event("step") with
// {index,total,resumed,woke}; attempts run until the result is OK and the
// gate passes, or retries are spent, or the gate aborts. Passed or not,
// ctx["_results"][name] holds the result, and a session id goes into
// ctx["_sessions"] and the Lineage (original name only). A passed step
// writes ctx[name] (Reduce, default the text). A failed step follows
// OnFail: stop (ctx["_failed"] set, nil error), continue, or raise (a
// *StepError). Errors from the runner itself (nothing could be attempted,
// or ctx was cancelled) and non-abort gate errors end Run with that error.
func (w *Workflow) Run(ctx context.Context, h Host, onEvent func(harness.Event), onStep func(Step, harness.StepResult)) (Ctx, error) {
	for _, s := range w.Steps {
		if !validOnFail(s.OnFail) {
			return nil, fmt.Errorf("flow: step %s: on_fail %q is not stop, continue or raise", s.Name, s.OnFail)
		}
		if s.Prompt == nil {
			return nil, fmt.Errorf("flow: step %s: no prompt", s.Name)
		}
	}
	name := w.Name
	if name == "" {
		name = "workflow"
	}
	onEvent = recording(h, onEvent)
	c := Ctx{}
	for k, v := range w.Context {
		c[k] = v
	}
	c[KeyRuntime] = h
	c[KeyOnEvent] = onEvent
	c[KeyWorkflow] = name
	if w.Channel != nil {
		c[KeyChannel] = w.Channel
	}
	if w.Workbench != nil {
		c[KeyBench] = w.Workbench
	}
	c.results()
	c.sessions()
	lin := w.Lineage
	if lin == nil && h.RunDir() != "" {
		lin = NewLineage(h.RunDir(), h.Workspace(), name)
	}
	for i := range w.Steps {
		s := w.Steps[i]
		if s.When != nil && !s.When(c) {
			continue
		}
		if w.Channel != nil {
			w.Channel.SetStep(s.Name)
		}
		res, passed, err := w.runStep(ctx, h, lin, c, &s, i, onEvent)
		if err != nil {
			return c, err
		}
		if onStep != nil {
			onStep(s, res)
		}
		if passed {
			if s.Reduce != nil {
				c[s.Name] = s.Reduce(res, c)
			} else {
				c[s.Name] = res.Text
			}
			continue
		}
		switch s.OnFail {
		case OnFailContinue:
			continue
		case OnFailRaise:
			c[KeyFailed] = s.Name
			return c, &StepError{Step: s.Name, Result: res, Aborted: c.Aborted()}
		default:
			c[KeyFailed] = s.Name
			return c, nil
		}
	}
	return c, nil
}

// runStep runs one step's attempt loop. prompt/resume/fork are locals and
// never written back to the Step, so the same Step can run twice.
func (w *Workflow) runStep(ctx context.Context, h Host, lin *Lineage, c Ctx, s *Step, index int, onEvent func(harness.Event)) (harness.StepResult, bool, error) {
	prompt0 := s.Prompt(c)
	resume0, fork0, resumed := "", s.Fork, false
	if s.ResumeFrom != "" {
		resume0 = c.sessions()[s.ResumeFrom]
		if resume0 == "" {
			resume0 = lin.Latest(s.ResumeFrom)
		}
	}
	woke := len(lin.History(s.Name))
	if w.Continuous && s.ResumeFrom == "" {
		if sid := lin.Latest(s.Name); sid != "" {
			resume0, fork0, resumed = sid, false, true
			if s.ResumePrompt != nil {
				prompt0 = s.ResumePrompt(c)
			}
		}
	}
	onEvent(eventOf(harness.EventStep, s.Name, harness.FlowStepEvent{Index: index, Total: len(w.Steps), Resumed: resumed, Woke: woke}))
	promptCur, resumeCur, forkCur := prompt0, resume0, fork0
	var res harness.StepResult
	passed := false
	for attempt := 0; attempt <= max(0, s.Retries); attempt++ {
		var err error
		res, err = runOnce(ctx, h, s.Spec, promptCur, harness.RunOptions{
			StepName: s.label(attempt), Resume: resumeCur, Fork: forkCur && resumeCur != "", OnEvent: onEvent,
			// Every session a flow resumes is its own (lineage, an earlier
			// step, a rejected answer): one that was never written starts
			// fresh rather than failing each retry of the flow.
			ResumeOwn: true,
		}, func(sid string) {
			c.sessions()[s.Name] = sid
			_ = lin.Remember(s.Name, sid)
		})
		if err != nil {
			return res, false, fmt.Errorf("flow: step %s: %w", s.label(attempt), err)
		}
		c.results()[s.Name] = res
		if res.SessionID != "" {
			c.sessions()[s.Name] = res.SessionID
			if err := lin.Remember(s.Name, res.SessionID); err != nil {
				onEvent(eventOf(harness.EventError, s.Name, harness.ErrorEvent{Error: err.Error()}))
			}
		}
		if err := ctx.Err(); err != nil && !res.OK {
			// Interrupted or terminated: no further round, no gate; the run
			// ends as interrupted (it stays resumable).
			return res, false, fmt.Errorf("flow: step %s: %w", s.label(attempt), context.Cause(ctx))
		}
		passed = res.OK
		if passed && s.Gate != nil {
			ok, gerr := s.Gate(ctx, res, c)
			if gerr != nil {
				if !IsAbort(gerr) {
					return res, false, fmt.Errorf("flow: step %s: gate: %w", s.Name, gerr)
				}
				c[KeyAborted] = gerr.Error()
				return res, false, nil
			}
			passed = ok
		}
		if passed || attempt == s.Retries {
			break
		}
		promptCur, resumeCur, forkCur = prompt0, resume0, fork0
		if s.OnReject != nil && res.SessionID != "" {
			if fb := s.OnReject(res, c); fb != "" {
				promptCur, resumeCur, forkCur = fb, res.SessionID, false
			}
		}
	}
	return res, passed, nil
}

// runOnce wraps the one Run call with the host's session callback, removed
// again before anything else (the gate) runs.
func runOnce(ctx context.Context, h Host, spec harness.AgentSpec, prompt string, opts harness.RunOptions, onSession func(string)) (harness.StepResult, error) {
	restore := h.OnSession(onSession)
	defer restore()
	return h.Run(ctx, spec, prompt, opts)
}

// recording returns the workflow's event callback: the workflow's own
// events ("step", "task", "goal", "verdict") are written to the host's record, then
// passed to onEvent (nil: none). Events of the runs themselves are recorded
// by the host already and are not written twice.
func recording(h Host, onEvent func(harness.Event)) func(harness.Event) {
	if onEvent == nil {
		onEvent = func(harness.Event) {}
	}
	return func(e harness.Event) {
		if e.Kind == harness.EventStep || e.Kind == harness.EventTask || e.Kind == harness.EventGoal || e.Kind == harness.EventVerdict {
			h.Record(e)
		}
		onEvent(e)
	}
}
