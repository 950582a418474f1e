package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/internal/demo"
	"github.com/flowerhq/flower/internal/selftestmark"
	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/testkit/testbed"
)

// schemaLines is flowerbin.JSONLines with every line held to the --json schema.
func schemaLines(t *testing.T, out []byte, what string) []gjson.Result {
	t.Helper()
	lines := flowerbin.JSONLines(t, out)
	for _, l := range lines {
		checkSchema(t, what, l.Raw)
	}
	return lines
}

// TestE2E_StarterPipeline: `echo ask | flower --json … - | jq` — every line
// parses and the last one is the result. This is the flow that runs the real
// guard self-test first, with the claude and flower-hook under test, and
// leaves the mark in its run dir (internal/selftestmark) with the key
// flowerbin.MarkSelfTested writes: the other flows of the suite start
// marked, so that each does not pay for a canary claude.
func TestE2E_StarterPipeline(t *testing.T) {
	t.Parallel()
	bed := testbed.NewFor(t, demoScript)
	flower := testbed.BuildBinary(t, "./cmd/flower")
	answers := filepath.Join(t.TempDir(), "answers.txt")
	os.WriteFile(answers, []byte(demo.Answer+"\n"), 0o644)
	runDir := filepath.Join(t.TempDir(), "runs")
	cmd := testbed.Command(t, flower, "--json", "--timeout", "0", "--answers", answers, "--run-dir", runDir, "-")
	cmd.Env = flowerbin.Env(t, bed.Env(), bed.Claude)
	cmd.Dir = bed.Workspace
	cmd.Stdin = strings.NewReader(demo.Ask + "\n")
	out, _ := flowerbin.Output(t, cmd, "flower")
	lines := schemaLines(t, out, "flower --json")
	if last := lines[len(lines)-1]; last.Get("kind").String() != "flow_result" || last.Get("exit_code").Int() != 0 {
		t.Fatalf("last line: %s", last.Raw)
	}
	marked := filepath.Join(t.TempDir(), "marked")
	flowerbin.MarkSelfTested(t, marked, bed.Claude)
	want, _ := os.ReadFile(filepath.Join(marked, selftestmark.File))
	if got, err := os.ReadFile(filepath.Join(runDir, selftestmark.File)); err != nil || string(got) != string(want) {
		t.Errorf("the passed self-test's mark is %q (%v), want the key the tests' marks hold, %q", got, err, want)
	}
	if b, _ := os.ReadFile(filepath.Join(bed.Workspace, ".flower", "notes", "需求.md")); !strings.Contains(string(b), "## 目标") {
		t.Errorf("brief: %q", b)
	}
	if log, _ := os.ReadFile(filepath.Join(bed.Workspace, ".flower", "notes", "问答记录.md")); !strings.Contains(string(log), demo.Answer) {
		t.Errorf("the answer from the file is not in the Q&A log: %q", log)
	}
	if jq, err := exec.LookPath("jq"); err == nil {
		c := testbed.Command(t, jq, "-e", "-c", ".kind")
		c.Stdin = bytes.NewReader(out)
		if b, err := c.CombinedOutput(); err != nil || !strings.HasSuffix(strings.TrimSpace(string(b)), `"flow_result"`) {
			t.Errorf("jq: %v %s", err, flowerbin.Tail(b))
		}
	}
}

// TestE2E_StarterErrors: bad flags are usage errors (exit 2, usage line);
// a missing claude names the set-up command; no ask is a usage error.
func TestE2E_StarterErrors(t *testing.T) {
	flowerbin.SkipShort(t, "it builds flower and runs it")
	t.Parallel()
	flower := testbed.BuildBinary(t, "./cmd/flower")
	ws := t.TempDir()
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "ANTHROPIC_API_KEY=sk-test"}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"bad flag", []string{"--bogus", "x"}, 2, "Usage:"},
		{"bad value", []string{"--rounds", "many", "x"}, 2, "Usage:"},
		{"no ask", []string{}, 2, "say what you want"},
		{"missing claude", []string{"--no-self-test", "do something"}, 1, "npm install -g @anthropic-ai/claude-code@"}, // a built flower outside a checkout
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := testbed.Command(t, flower, tc.args...)
			cmd.Env, cmd.Dir, cmd.Stdin = env, ws, strings.NewReader("")
			out, _ := cmd.CombinedOutput()
			if got := cmd.ProcessState.ExitCode(); got != tc.code || !strings.Contains(string(out), tc.want) {
				t.Errorf("exit %d (want %d), output lacks %q:\n%s", got, tc.code, tc.want, out)
			}
		})
	}
}

// TestE2E_StarterRefusesWithoutGuards: a failing guard canary (a hook that
// never denies) keeps `flower "ask"` from starting, unless --no-self-test.
func TestE2E_StarterRefusesWithoutGuards(t *testing.T) {
	t.Parallel()
	claude := testbed.ClaudePath(t)
	flower := testbed.BuildBinary(t, "./cmd/flower")
	ws := t.TempDir()
	cmd := testbed.Command(t, flower, "--hook", "/bin/true", "--run-dir", filepath.Join(ws, "runs"), "do something")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "ANTHROPIC_API_KEY=sk-test", "FLOWER_CLAUDE="+claude)
	cmd.Dir = ws
	out, _ := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "guard self-test failed") || !strings.Contains(string(out), "--no-self-test") {
		t.Fatalf("exit %d:\n%s", cmd.ProcessState.ExitCode(), out)
	}
	if _, err := os.Stat(filepath.Join(ws, ".flower")); err == nil {
		t.Error("a refused start still created the workbench")
	}
}
