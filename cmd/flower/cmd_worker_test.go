package main

import (
	"testing"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
)

// TestJudgeFailedLast: only the last judge step counts, and only when it
// failed; a judge that gave a verdict (the control) is an outcome.
func TestJudgeFailedLast(t *testing.T) {
	judge := func(n string, ok bool, err string) harness.StepResult {
		return harness.StepResult{Step: flow.WorkStepName + "-评审#" + n, OK: ok, Error: err}
	}
	work := harness.StepResult{Step: flow.WorkStepName, OK: true}
	for _, c := range []struct {
		name  string
		steps []harness.StepResult
		want  string
	}{
		{"last judge failed", []harness.StepResult{work, judge("1", false, "write: no space left on device\nmore")}, "write: no space left on device"},
		{"failed without a word", []harness.StepResult{work, judge("1", false, "")}, "the step did not finish"},
		{"control: an earlier failure, a later verdict", []harness.StepResult{judge("1", false, "x"), work, judge("2", true, "")}, ""},
		{"control: no judge", []harness.StepResult{work}, ""},
	} {
		if got := judgeFailedLast(c.steps); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
