package flow

import (
	"context"
	"errors"
	"fmt"

	"github.com/flowerhq/flower/harness"
)

// Ctx is the state a Workflow hands from step to step. Step names are keys for step outputs; every key the
// Workflow itself writes starts with "_" (see the package doc).
type Ctx map[string]any

// Private ctx keys written by Workflow.Run and the step factories.
const (
	KeyResults  = "_results"   // map[string]harness.StepResult, by step name, passed or not
	KeySessions = "_sessions"  // map[string]string, step name → session id
	KeyAborted  = "_aborted"   // string: the StepAbort message of the step that gave up
	KeyFailed   = "_failed"    // string: the step whose failure stopped the workflow
	KeyRuntime  = "_runtime"   // Host: what gates use to run more agents (the judge)
	KeyOnEvent  = "_on_event"  // func(harness.Event): the workflow's event callback, never nil
	KeyChannel  = "_channel"   // Channel: the workflow's channel, when set
	KeyBench    = "_workbench" // *harness.Workbench: the workflow's workbench, when set
	KeyWorkflow = "_workflow"  // string: the workflow's name
	KeyWoke     = "_woke"      // int: how often this workflow was woken (StarterFlow sets it)
)

// Keys of the documents the factories put into ctx.
const (
	BriefKey   = "_brief"   // Brief: the frozen brief
	MissingKey = "_missing" // []string: sections the last clarify reply lacked
	GoalKey    = "_goal"    // Goal: the frozen goal
	// FrozenGoalKey holds the FrozenGoal every judge round is given.
	FrozenGoalKey = "_goal_frozen"
	goalWarnedKey = "_goal_warned" // string: the frozen sha256 whose changed file was already reported
	VerdictKey    = "_verdict"     // Verdict: the judge's last verdict
	RoundKey      = "_round"       // int: goal-guard rounds judged so far
)

// Values of Step.OnFail.
const (
	OnFailStop     = "stop"     // default: the workflow ends, Run returns ctx and no error
	OnFailContinue = "continue" // the failure is recorded, the next step runs
	OnFailRaise    = "raise"    // the workflow ends and Run returns a *StepError
)

// Prompt is a step's prompt: a function of ctx. Text makes a fixed one.
type Prompt func(Ctx) string

// Text returns a Prompt that always says s.
func Text(s string) Prompt { return func(Ctx) string { return s } }

// Gate judges a finished attempt. true passes; false means "not this time,
// one more round" (if retries are left); a *StepAbort error means "another
// round will not help either": stop retrying at once. Gates get a
// context.Context because they may run agents themselves (the judge).
type Gate func(ctx context.Context, r harness.StepResult, c Ctx) (bool, error)

// Step declares one step; Runner.Run(step.Spec, prompt, …) is what actually
// runs. Name, Spec and Prompt are the positional fields (see NewStep).
type Step struct {
	Name   string
	Spec   harness.AgentSpec
	Prompt Prompt

	// ResumeFrom names a step (of this run, or via Lineage of an earlier
	// process) whose session this step continues; Fork branches it instead.
	ResumeFrom string
	Fork       bool

	Retries int
	Gate    Gate
	// OnFail is "stop" (empty means stop), "continue" or "raise".
	OnFail string
	// When skips the step when it returns false.
	When func(Ctx) bool
	// OnReject turns a rejected attempt into feedback: the next attempt
	// resumes the rejected session with this text (fork forced off). An
	// empty string, or a result without a session, means a fresh attempt.
	OnReject func(harness.StepResult, Ctx) string
	// ResumePrompt replaces Prompt when the step continues its own session
	// from an earlier process (continuity).
	ResumePrompt Prompt
	// Reduce turns the passed result into ctx[Name]; default result.Text.
	Reduce func(harness.StepResult, Ctx) string
}

// NewStep is the positional form: NewStep("取词", terse, Text("读 words.txt …")).
func NewStep(name string, spec harness.AgentSpec, prompt Prompt) Step {
	return Step{Name: name, Spec: spec, Prompt: prompt}
}

// StepAbort is thrown from a gate: stop now, do not retry. The workflow
// records ctx["_aborted"], leaves the retry loop without spending the
// remaining retries, and goes on as for a normal failure (OnFail).
type StepAbort struct{ Reason string }

func (e *StepAbort) Error() string { return e.Reason }

// ExitCode maps an abort to flower's exit code 3.
func (e *StepAbort) ExitCode() int { return 3 }

// Abort returns a *StepAbort with a formatted reason.
func Abort(format string, a ...any) error { return &StepAbort{Reason: fmt.Sprintf(format, a...)} }

// IsAbort reports whether err is or wraps a *StepAbort.
func IsAbort(err error) bool {
	var a *StepAbort
	return errors.As(err, &a)
}

// StepError is what Run returns for a failed step with OnFail "raise".
type StepError struct {
	Step   string
	Result harness.StepResult
	// Aborted is the StepAbort message when the gate gave up.
	Aborted string
}

func (e *StepError) Error() string {
	switch {
	case e.Aborted != "":
		return fmt.Sprintf("flow: step %s aborted: %s", e.Step, e.Aborted)
	case e.Result.Error != "":
		return fmt.Sprintf("flow: step %s failed: %s", e.Step, e.Result.Error)
	}
	return fmt.Sprintf("flow: step %s failed", e.Step)
}

// ExitCode is 3 for an aborted step, 1 otherwise.
func (e *StepError) ExitCode() int {
	if e.Aborted != "" {
		return 3
	}
	return 1
}

// Runner runs one agent step: what gates need to run more agents (the
// judge), and the part of a Host that does the work.
type Runner interface {
	Run(ctx context.Context, spec harness.AgentSpec, prompt string, opts harness.RunOptions) (harness.StepResult, error)
}

// Host is everything a Workflow needs from what runs it; harness.Runtime is
// one, Bare makes one of any Runner. The Workflow uses every method the
// same way whatever else the host is:
type Host interface {
	Runner
	// RunDir is where the Lineage lives, <run_dir>/lineage.json, unless
	// Workflow.Lineage is set; "" keeps none.
	RunDir() string
	// Workspace keys the Lineage, so two workspaces sharing a run dir
	// never wake or resume each other's sessions.
	Workspace() string
	// Record writes the workflow's own events ("step", "task", "goal") to
	// the run's record (harness.Runtime: events.jsonl, read by `flower runs
	// show` and `flower ask`). Events of the runs themselves are recorded
	// by the host already and are not passed here.
	Record(ev harness.Event)
	// OnSession installs fn to be told a step's session id as soon as it
	// is known; restore removes it again. The Workflow installs it around
	// the one Run call of an attempt only, so a gate's own runs (the judge)
	// are never taken for the step's session.
	OnSession(fn func(sessionID string)) (restore func())
}

// Bare is the Host of a plain Runner (a fake, a wrapper): RunDir and
// Workspace are "" (no Lineage unless Workflow.Lineage is set), Record
// drops the event (the workflow's events reach its onEvent only) and
// OnSession installs nothing (a step's session is known from its result).
// Bare looks for none of these methods on r: a Workflow behaves as the
// Host it is given says, never as the methods its runner happens to have.
func Bare(r Runner) Host { return bare{r} }

type bare struct{ Runner }

func (bare) RunDir() string                          { return "" }
func (bare) Workspace() string                       { return "" }
func (bare) Record(harness.Event)                    {}
func (bare) OnSession(func(string)) (restore func()) { return func() {} }

// label is the step name of attempt n: the name itself, then name#roundN
// (with OnReject: N = attempt+1) or name#retryN.
func (s *Step) label(attempt int) string {
	switch {
	case attempt == 0:
		return s.Name
	case s.OnReject != nil:
		return fmt.Sprintf("%s#round%d", s.Name, attempt+1)
	}
	return fmt.Sprintf("%s#retry%d", s.Name, attempt)
}

// results returns ctx["_results"], creating it.
func (c Ctx) results() map[string]harness.StepResult {
	m, _ := c[KeyResults].(map[string]harness.StepResult)
	if m == nil {
		m = map[string]harness.StepResult{}
		c[KeyResults] = m
	}
	return m
}

// sessions returns ctx["_sessions"], creating it.
func (c Ctx) sessions() map[string]string {
	m, _ := c[KeySessions].(map[string]string)
	if m == nil {
		m = map[string]string{}
		c[KeySessions] = m
	}
	return m
}

// Result returns the recorded result of a step.
func (c Ctx) Result(name string) (harness.StepResult, bool) {
	r, ok := c.results()[name]
	return r, ok
}

// Session returns the session id recorded for a step in this run.
func (c Ctx) Session(name string) string { return c.sessions()[name] }

// Aborted returns the StepAbort message of this run, if a step gave up.
func (c Ctx) Aborted() string { s, _ := c[KeyAborted].(string); return s }

// String returns ctx[key] when it is a string.
func (c Ctx) String(key string) string { s, _ := c[key].(string); return s }

// Outcome summarizes a finished run for a command line: nil when no step
// stopped it, a *StepError (exit code 3 when aborted) otherwise.
func (c Ctx) Outcome() error {
	name := c.String(KeyFailed)
	if name == "" {
		return nil
	}
	r, _ := c.Result(name)
	return &StepError{Step: name, Result: r, Aborted: c.Aborted()}
}

// emit sends ev through ctx["_on_event"] when one is set.
func (c Ctx) emit(ev harness.Event) {
	if fn := c.OnEvent(); fn != nil {
		fn(ev)
	}
}

// The services Workflow.Run puts into the context, typed: a gate or a step
// function takes them from here, never by key and type assertion (the
// keys stay for code that reads the context as a plain dict).

// Runner is what gates run more agents with (ctx["_runtime"], the
// workflow's Host); ok is false outside Workflow.Run.
func (c Ctx) Runner() (Runner, bool) {
	r, ok := c[KeyRuntime].(Runner)
	return r, ok && r != nil
}

// OnEvent is the workflow's event callback (ctx["_on_event"]); nil outside
// Workflow.Run.
func (c Ctx) OnEvent() func(harness.Event) {
	fn, _ := c[KeyOnEvent].(func(harness.Event))
	return fn
}

// Channel is the workflow's channel (ctx["_channel"]), nil when it has none.
func (c Ctx) Channel() Channel { ch, _ := c[KeyChannel].(Channel); return ch }

// Workbench is the workflow's workbench (ctx["_workbench"]), nil when none.
func (c Ctx) Workbench() *harness.Workbench { wb, _ := c[KeyBench].(*harness.Workbench); return wb }

// Woke is how often this workflow was woken (ctx["_woke"]; StarterFlow sets it).
func (c Ctx) Woke() int { n, _ := c[KeyWoke].(int); return n }

// Verdict is the goal guard's last verdict (ctx["_verdict"]); ok is false
// before its first round.
func (c Ctx) Verdict() (Verdict, bool) { v, ok := c[VerdictKey].(Verdict); return v, ok }

// Round is how many rounds the goal guard has judged (ctx["_round"]).
func (c Ctx) Round() int { n, _ := c[RoundKey].(int); return n }
