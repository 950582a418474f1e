package pinned

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestSetupScriptInStep: scripts/setup.sh installs exactly ClaudeVersion at
// ClaudeRelPath, and the record scripts run that claude (the shell cannot
// import the constants, so this test holds them in step).
func TestSetupScriptInStep(t *testing.T) {
	b, err := os.ReadFile("../../scripts/setup.sh")
	if err != nil {
		t.Fatal(err)
	}
	if err := inStep(string(b)); err != "" {
		t.Error("scripts/setup.sh: " + err)
	}
	lib, err := os.ReadFile("../../scripts/record-lib.sh")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(lib), `claude="${FLOWER_CLAUDE:-$root/`+ClaudeRelPath+`}"`) {
		t.Error("scripts/record-lib.sh does not default to the claude at " + ClaudeRelPath)
	}
	// Control: a script pinned elsewhere is caught.
	if inStep("CLAUDE_VERSION=9.9.9\ncli_dir=\"$root/.claude-cli\"\nclaude=\"$cli_dir/x/claude\"\n") == "" {
		t.Error("a script with another version and path passes")
	}
}

// inStep says how script disagrees with the constants ("" when it agrees).
func inStep(script string) string {
	v := regexp.MustCompile(`(?m)^CLAUDE_VERSION=(\S+)$`).FindStringSubmatch(script)
	if v == nil || v[1] != ClaudeVersion {
		return "CLAUDE_VERSION is not " + ClaudeVersion
	}
	dir := regexp.MustCompile(`(?m)^cli_dir="\$root/([^"]+)"$`).FindStringSubmatch(script)
	bin := regexp.MustCompile(`(?m)^claude="\$cli_dir/([^"]+)"$`).FindStringSubmatch(script)
	if dir == nil || bin == nil || dir[1]+"/"+bin[1] != ClaudeRelPath {
		return "the claude it installs is not at " + ClaudeRelPath
	}
	return ""
}
