package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
)

// flowExit is the outcome of a flow run as an exit code.
type flowExit struct {
	code int
	msg  string
}

func (e *flowExit) Error() string { return e.msg }
func (e *flowExit) ExitCode() int { return e.code }

// flowOutcome is how a run ended and where everything is; its JSON form
// (the flow_result line) is flowResultJSON.
type flowOutcome struct {
	OK                              bool
	ExitCode                        int
	Error, Run, RunDir, Events      string
	Workbench, Brief, Goal, Verdict string
	VerdictReason                   string            // why the goal was not achieved (the summary's line; in Error too)
	Decision                        flow.TypedVerdict // the last round as flower decided it (its Verdict is Verdict)
	JudgeFailed                     string            // the last round had no typed verdict: its judge step's error
	FailedStep                      string            // the step that failed, if one did
	Unread                          int               // told messages no inbox call took
	CostUSD, Seconds                float64
	Steps                           []harness.StepResult
}

func summarize(wf *flow.Workflow, rt stepRunner, fc flow.Ctx, runErr, ctxErr error) flowOutcome {
	o := flowOutcome{Run: rt.RunID(), RunDir: rt.RunDir(), Events: rt.EventsPath(), Steps: rt.Results()}
	if o.Steps == nil {
		o.Steps = []harness.StepResult{}
	}
	if wb := wf.Workbench; wb != nil {
		o.Workbench = wb.Root()
		for _, p := range []struct {
			dst  *string
			name string
		}{{&o.Brief, flow.DefaultBriefName}, {&o.Goal, flow.DefaultGoalName}} {
			if f := filepath.Join(wb.Notes(), p.name); fileExists(f) {
				*p.dst = f
			}
		}
	}
	var first, last float64
	for _, s := range o.Steps {
		o.CostUSD += s.CostUSD
		if first == 0 || s.StartedAt < first {
			first = s.StartedAt
		}
		if s.EndedAt > last {
			last = s.EndedAt
		}
	}
	o.Seconds = last - first
	if v, ok := fc.Verdict(); ok {
		o.Verdict, o.Decision, o.JudgeFailed = v.State, v.Decision(), v.JudgeFailed
	}
	var se *flow.StepError
	switch {
	case ctxErr != nil || errors.Is(runErr, context.Canceled):
		o.ExitCode, o.Error = exitInterrupted, "interrupted; run the same command again to pick up where it stopped"
	case fc != nil && fc.Aborted() != "":
		o.ExitCode, o.Error = exitAborted, "aborted: "+fc.Aborted()
	case errors.As(runErr, &se) && se.Aborted != "":
		o.ExitCode, o.Error = exitAborted, "aborted: "+se.Aborted
	case runErr != nil:
		o.ExitCode, o.Error = exitFailed, runErr.Error()
	case fc != nil && fc.String(flow.KeyFailed) != "":
		o.failedAt(fc.String(flow.KeyFailed), fc)
	default:
		o.OK = true
	}
	return o
}

// failedAt is the outcome of a run that step name stopped: exit 1, the
// step's own error, and when the goal guard's rounds ran out, the last
// verdict's reason (a failed judge's error among them).
func (o *flowOutcome) failedAt(name string, fc flow.Ctx) {
	o.ExitCode, o.Error, o.FailedStep = exitFailed, "step "+name+" failed", name
	for _, s := range o.Steps {
		if s.Step == name && s.Error != "" {
			o.Error += ": " + s.Error
		}
	}
	if v, ok := fc.Verdict(); ok && !v.Achieved() && name == flow.WorkStepName {
		o.VerdictReason = clipWidth(strings.Join(strings.Fields(v.Reason), " "), 300)
		o.Error += ": goal not achieved: " + o.VerdictReason
	}
}

// exitError is the outcome as flower's exit: nil when it went well. At a
// terminal the summary already said what went wrong, so nothing more is
// printed; in a pipeline stdout is JSON and the error goes to stderr once.
func (o flowOutcome) exitError(jsonOut bool) error {
	switch {
	case o.ExitCode == exitOK:
		return nil
	case o.ExitCode == exitInterrupted:
		return &resumeHint{err: context.Canceled}
	case !jsonOut:
		return silentExit(o.ExitCode)
	}
	return &flowExit{code: o.ExitCode, msg: o.Error}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
