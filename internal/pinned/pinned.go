// Package pinned names the Claude Code CLI that flower is built and tested
// against, and where scripts/setup.sh installs it: the one place for both
// (the harness's locator, `flower doctor`/`flower version` and the test bed
// read them here; a test keeps scripts/setup.sh in step).
//
// Lifecycle: constants only. A leaf: it imports nothing.
package pinned

// ClaudeVersion is the @anthropic-ai/claude-code version flower is tested on.
const ClaudeVersion = "2.1.328"

// ClaudeRelPath is where scripts/setup.sh installs the pinned CLI, relative
// to the repository root.
const ClaudeRelPath = ".claude-cli/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
