package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
)

// TestTell_ReachesTheRunningFlow: while the root command's flow runs (in
// process, on a fake runtime) `flower tell` finds it through what the run
// published and delivers to its channel: the receipt names the run, the Q&A
// log records the words, and since no inbox call took them, the summary
// says they never reached the coordinator. Control: once the flow ended,
// tell finds no flow (exit 1).
func TestTell_ReachesTheRunningFlow(t *testing.T) {
	ws := t.TempDir()
	tell := func() (int, string) {
		e, out, errb := testEnv("")
		code := run(context.Background(), e, []string{"flower", "tell", "-C", ws, "also support multiplication"})
		return code, out.String() + errb.String()
	}
	var tellCode int
	var told string
	answer := starterAnswers(fakeAchieved)
	e, out, errb := testEnv("")
	rts := fakeFactory(t, e, func(step string, spec harness.AgentSpec, prompt string) harness.StepResult {
		if step == flow.WorkStepName {
			tellCode, told = tell()
		}
		return answer(step, spec, prompt)
	})
	if code := run(context.Background(), e, []string{"flower", "-C", ws, "--no-self-test", "--timeout", "0", "做计算器"}); code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errb)
	}
	if rt := (*rts)[0]; tellCode != exitOK || !strings.Contains(told, "delivered to run "+rt.RunID()) {
		t.Errorf("tell during the flow: exit %d, %q", tellCode, told)
	}
	if b, err := os.ReadFile(filepath.Join(ws, ".flower", "notes", flow.DefaultLogName)); err != nil || !strings.Contains(string(b), "also support multiplication") {
		t.Errorf("Q&A log %q, %v", b, err)
	}
	if !strings.Contains(out.String(), "1 told message(s) never reached the coordinator") {
		t.Errorf("the summary does not count the unread message:\n%s", out)
	}
	if code, msg := tell(); code != exitFailed || !strings.Contains(msg, "no flow is running in "+ws) {
		t.Errorf("control: tell after the flow: exit %d, %q", code, msg)
	}
}
