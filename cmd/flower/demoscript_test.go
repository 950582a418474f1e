package main

import (
	"context"
	"strings"
	"testing"

	"github.com/flowerhq/flower/internal/demo"
	"github.com/flowerhq/flower/testkit/flowerbin"
)

// TestDemoScriptParses: `flower demo --print-script` prints the embedded
// script the demo runs (no model, no claude); it parses once the workspace
// is filled in, and holds what the demo's tests rely on.
func TestDemoScriptParses(t *testing.T) {
	e, out, errb := testEnv("")
	e.parsed = nil
	if code := run(context.Background(), e, []string{"flower", "demo", "--print-script"}); code != 0 || out.String() != demo.YAML {
		t.Fatalf("exit %d, %s; printed %d bytes of %d", code, errb.String(), out.Len(), len(demo.YAML))
	}
	s := demoScript("/ws")
	if len(s.Conversations) != 5 || !strings.Contains(flowerbin.DemoBrief, "## 未知与假设") || !strings.Contains(flowerbin.DemoGoal, "## 检查清单") || !strings.Contains(flowerbin.DemoAchieved, "已达成") {
		t.Errorf("demo script: %d conversations; brief %q goal %q", len(s.Conversations), flowerbin.DemoBrief, flowerbin.DemoGoal)
	}
	if !strings.Contains(string(s.Conversations[0].Replies[0].ToolUse.Input), demo.Answer) || strings.Contains(demo.YAML, "/ws/") {
		t.Error("the demo's answer is not an option, or a path is not the placeholder")
	}
}
