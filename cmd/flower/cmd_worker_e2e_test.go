package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// TestE2E_WorkerCanRunCommands: in the starter flow the coordinator may not
// touch anything, but the coder it delegates to must be able to run a
// command that changes the workspace (Bash and Write in a subagent
// just work) — under -p, the CLI alone would deny it.
func TestE2E_WorkerCanRunCommands(t *testing.T) {
	t.Parallel()
	const brief = "## 目标\nx\n## 验收标准\ny\n## 边界\nz\n## 未知与假设\nw"
	bed := testbed.NewFor(t, func(ws string) *scripted.Script {
		return &scripted.Script{Conversations: []scripted.Conversation{
			{Name: "coder", Match: scripted.Match{System: "你是执行者"}, Replies: []scripted.Reply{
				{ToolUse: &scripted.Block{Name: "Bash", Input: []byte(`{"command":"mkdir made-by-coder && touch made-by-coder/ok","description":"make"}`)}},
				{Text: "done"}}},
			{Name: "clarify", Match: scripted.Match{System: "你是需求澄清者"}, Replies: []scripted.Reply{{Text: brief}}},
			{Name: "coordinator", Match: scripted.Match{System: "你是协调者"}, Replies: []scripted.Reply{
				{ToolUse: &scripted.Block{Name: "Agent", Input: []byte(`{"description":"make it","prompt":"make the folder","subagent_type":"coder","run_in_background":false}`)}},
				{Text: "coordinated"}}},
		}}
	})
	flower := testbed.BuildBinary(t, "./cmd/flower")
	cmd := testbed.Command(t, flower, "--json", "--no-goal", "--no-self-test", "--timeout", "0", "--run-dir", filepath.Join(t.TempDir(), "runs"), "make a folder")
	cmd.Env = flowerEnv(t, bed.Env(), bed.Claude)
	cmd.Dir = bed.Workspace
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("flower: %v\n%s", err, tailOf(out))
	}
	if _, err := os.Stat(filepath.Join(bed.Workspace, "made-by-coder", "ok")); err != nil {
		var denied string
		for _, r := range bed.Model.RequestsFor("coder") {
			for _, tr := range r.ToolResults() {
				if tr.IsError {
					denied = tr.Content
				}
			}
		}
		t.Fatalf("the coder's command did not run: %s", strings.TrimSpace(denied))
	}
}
