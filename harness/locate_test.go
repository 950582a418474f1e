package harness

import (
	"errors"
	"strings"
	"testing"

	"github.com/flowerhq/flower/internal/pinned"
)

// A flower outside a checkout (go install, a copied binary: the test
// binary is one) is told to install claude with npm, not to run a set-up
// script it does not have.
func TestFindClaudeNamesTheInstallLine(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := FindClaude("", func(string) string { return "" })
	if !errors.Is(err, ErrClaudeNotFound) {
		t.Fatalf("err = %v", err)
	}
	want := "npm install -g @anthropic-ai/claude-code@" + pinned.ClaudeVersion
	if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "scripts/setup.sh") {
		t.Errorf("err = %v, want the npm line %q", err, want)
	}
}
