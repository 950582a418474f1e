package harness

import (
	"os"
	"path/filepath"
	"strings"
)

// A step with AgentSpec.InstructionsAtStart (the judge and the goal step)
// takes no project instructions from the workspace as it is now (issue 31
// item 5): claude runs with --setting-sources=user (no project or local
// settings, rules, agents, skills or commands from .claude/) and
// CLAUDE_CODE_DISABLE_CLAUDE_MDS=1 (no CLAUDE.md of any folder, nested ones
// included; both probed on 2.1.328). What the workspace's CLAUDE.md files
// said when the Runtime opened — before any worker of this process ran —
// is given instead, in the appended system prompt, so a CLAUDE.md a worker
// writes or edits during the flow never reaches these steps.

// startMDFiles are the instruction files read at the start, as claude
// names them in its project memory.
var startMDFiles = []string{"CLAUDE.md", filepath.Join(".claude", "CLAUDE.md"), "CLAUDE.local.md"}

// maxStartMD caps each file's text taken at the start.
const maxStartMD = 64 << 10

// snapshotInstructions reads the workspace's CLAUDE.md files now.
func snapshotInstructions(workspace string) string {
	var parts []string
	for _, f := range startMDFiles {
		data, err := os.ReadFile(filepath.Join(workspace, f))
		if err != nil || len(strings.TrimSpace(string(data))) == 0 {
			continue
		}
		if len(data) > maxStartMD {
			data = data[:maxStartMD]
		}
		parts = append(parts, "### "+f+"\n\n"+strings.TrimSpace(string(data)))
	}
	if len(parts) == 0 {
		return ""
	}
	return "## 项目说明(流程开始时工作区的 CLAUDE.md;之后的改动不算数)\n\n" + strings.Join(parts, "\n\n")
}
