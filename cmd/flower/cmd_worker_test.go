package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/flowerhq/flower/flow"
)

// TestAttemptEnd: a queued flow's attempt is an outcome only with a typed
// verdict (or an abort, unreachable); a last round whose judge step failed
// (flow.Verdict.JudgeFailed) is an error River retries, whatever state
// the round was given for its worker. Controls: a typed not_yet and an
// achieved verdict complete the job.
func TestAttemptEnd(t *testing.T) {
	stopped := context.Canceled
	for _, c := range []struct {
		name        string
		out         flowOutcome
		ctxErr      error
		wantVerdict string
		wantErr     string // "" no error
	}{
		{"judge failed: no verdict", flowOutcome{Verdict: flow.NotYet, JudgeFailed: "write: no space left on device", ExitCode: exitFailed, Error: "step 执行 failed"},
			nil, "", "judge gave no verdict (its step failed: write: no space left on device)"},
		{"control: typed not yet", flowOutcome{Verdict: flow.NotYet, ExitCode: exitFailed, Error: "step 执行 failed"}, nil, flow.NotYet, ""},
		{"control: achieved", flowOutcome{Verdict: flow.Achieved, OK: true}, nil, flow.Achieved, ""},
		{"achieved beats an earlier failed judge", flowOutcome{Verdict: flow.Achieved, OK: true, JudgeFailed: "x"}, nil, flow.Achieved, ""},
		{"aborted: unreachable", flowOutcome{ExitCode: exitAborted, Error: "aborted: no one to ask"}, nil, flow.Unreachable, ""},
		{"a step failed before any judge", flowOutcome{ExitCode: exitFailed, Error: "step 澄清 failed: API Error"}, nil, "", "step 澄清 failed: API Error"},
		{"stopped", flowOutcome{Verdict: flow.NotYet}, stopped, flow.NotYet, "context canceled"},
		{"stopped while judging: no verdict", flowOutcome{Verdict: flow.NotYet, JudgeFailed: "signal: killed"}, stopped, "", "context canceled"},
	} {
		got, err := attemptEnd(c.out, "/ws", c.ctxErr)
		if got.Verdict != c.wantVerdict || got.Workspace != "/ws" {
			t.Errorf("%s: verdict %q (workspace %q), want %q", c.name, got.Verdict, got.Workspace, c.wantVerdict)
		}
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: error %v, want an outcome", c.name, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: error %v, want one with %q", c.name, err, c.wantErr)
		case c.ctxErr != nil && !errors.Is(err, c.ctxErr):
			t.Errorf("%s: error %v is not the context's", c.name, err)
		}
	}
}
