package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/flowerhq/flower/internal/testbed"
)

// TestE2E_Doctor: the guard self-test passes with the real flower-hook and
// fails (exit 1) when the hook does nothing; a missing claude is named.
func TestE2E_Doctor(t *testing.T) {
	claude := testbed.ClaudePath(t)
	flower := testbed.BuildBinary(t, "./cmd/flower")
	hook := testbed.BuildBinary(t, "./cmd/flower-hook")
	home := t.TempDir()
	env := append(os.Environ(), "HOME="+home, "ANTHROPIC_API_KEY=sk-test", "FLOWER_CLAUDE="+claude)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"healthy", []string{"--hook", hook}, 0, []string{"✓ workspace", "✓ self-test", "✓ version      " + pinnedClaude}},
		{"hook that never denies", []string{"--hook", "/bin/true"}, 1, []string{"✗ self-test", "the main thread's Bash ran"}},
		{"missing claude", []string{"--claude", "/nonexistent/claude"}, 1, []string{"✗ claude", "claude not found at /nonexistent/claude"}},
		{"bad flag", []string{"--bogus"}, 2, []string{"unknown flag --bogus"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(flower, append([]string{"doctor"}, tc.args...)...)
			cwd := t.TempDir() // the default workspace: the self-test must leave it empty
			cmd.Env, cmd.Dir = env, cwd
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			cmd.Run()
			if got := cmd.ProcessState.ExitCode(); got != tc.code {
				t.Errorf("exit %d, want %d\n%s", got, tc.code, out.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			if ents, _ := os.ReadDir(cwd); len(ents) != 0 {
				t.Errorf("doctor left %v in the workspace", ents)
			}
		})
	}
}
