package main

import (
	"context"
	"strings"
	"testing"
)

// TestDemoScriptParses: `flower demo --print-script` prints the embedded
// script the demo runs (no model, no claude); it parses once the workspace
// is filled in, and holds what the demo's tests rely on.
// The demo's documents, as its script "writes" them (for tests only: a
// package variable of flower would parse the script at every start).
var (
	demoBrief    = demoReply("clarify", 1)
	demoGoal     = demoReply("goal", 0)
	demoAchieved = demoReply("judge", 1)
)

func TestDemoScriptParses(t *testing.T) {
	e, out, errb := testEnv("")
	e.parsed = nil
	if code := run(context.Background(), e, []string{"flower", "demo", "--print-script"}); code != 0 || out.String() != demoScriptYAML {
		t.Fatalf("exit %d, %s; printed %d bytes of %d", code, errb.String(), out.Len(), len(demoScriptYAML))
	}
	s := demoScript("/ws")
	if len(s.Conversations) != 5 || !strings.Contains(demoBrief, "## 未知与假设") || !strings.Contains(demoGoal, "## 检查清单") || !strings.Contains(demoAchieved, "已达成") {
		t.Errorf("demo script: %d conversations; brief %q goal %q", len(s.Conversations), demoBrief, demoGoal)
	}
	if !strings.Contains(string(s.Conversations[0].Replies[0].ToolUse.Input), demoAnswer) || strings.Contains(demoScriptYAML, "/ws/") {
		t.Error("the demo's answer is not an option, or a path is not the placeholder")
	}
}
