package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/flowerhq/flower/testkit/testbed"
)

// modelServer is a `flower model serve` (or record) process of a test.
type modelServer struct {
	cmd    *exec.Cmd
	URL    string
	stderr *bytes.Buffer
}

// startModel runs `flower model ARGS…` and waits for its "listening on URL"
// line; the test's end interrupts it and waits for it to exit.
func startModel(t *testing.T, flower string, args ...string) *modelServer {
	t.Helper()
	return startModelEnv(t, flower, nil, args...)
}

// startModelEnv is startModel with env added to the server's environment.
func startModelEnv(t *testing.T, flower string, env []string, args ...string) *modelServer {
	t.Helper()
	cmd := testbed.Command(t, flower, append([]string{"model"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, stderr := testbed.Start(t, cmd)
	m := &modelServer{cmd: cmd, stderr: stderr}
	t.Cleanup(func() { m.Stop(t) })
	line, err := bufio.NewReader(out).ReadString('\n')
	_, rest, ok := strings.Cut(strings.TrimSpace(line), " on ")
	url, _, _ := strings.Cut(rest, " ")
	if err != nil || !ok {
		t.Fatalf("flower model %s: no listening line (%q, %v); stderr: %s", strings.Join(args, " "), line, err, stderr.String())
	}
	m.URL = url
	return m
}

// Stop ends the server with SIGTERM and waits for it (idempotent).
func (m *modelServer) Stop(t *testing.T) {
	if m.cmd.ProcessState != nil {
		return
	}
	m.cmd.Process.Signal(syscall.SIGTERM)
	if err := m.cmd.Wait(); err != nil {
		t.Errorf("flower model: %v; stderr: %s", err, m.stderr.String())
	}
}

// TestE2E_ModelServesAScriptToTwoRuns: one `flower model serve` and a script
// with a single reply serve two `flower step` runs in a row — each new claude
// session starts the conversation over — and -v logs one line per request.
func TestE2E_ModelServesAScriptToTwoRuns(t *testing.T) {
	t.Parallel()
	claude := testbed.ClaudePath(t)
	flower := testbed.BuildBinary(t, "./cmd/flower")
	dir := t.TempDir()
	script := filepath.Join(dir, "script.yaml")
	os.WriteFile(script, []byte("conversations:\n  - name: main\n    match: {first_user: say the scripted words}\n    replies:\n      - text: SCRIPTED-WORDS-ÄÖ\n"), 0o600)
	srv := startModel(t, flower, "serve", "--script", script, "--addr", "127.0.0.1:0", "-v")

	ws, home := filepath.Join(dir, "ws"), filepath.Join(dir, "home")
	os.MkdirAll(ws, 0o700)
	os.MkdirAll(home, 0o700)
	env := flowerEnv(t, testbed.BaseEnv(home, srv.URL), claude)
	for run := 1; run <= 2; run++ {
		cmd := testbed.Command(t, flower, "step", "-C", ws, "--run-dir", filepath.Join(dir, "runs"), "say the scripted words")
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "SCRIPTED-WORDS-ÄÖ") {
			t.Fatalf("run %d: %v\n%s\nserver: %s", run, err, tailOf(out), srv.stderr.String())
		}
	}
	srv.Stop(t)
	var mainLines []string
	sessions := map[string]bool{}
	for _, line := range strings.Split(srv.stderr.String(), "\n") {
		if strings.Contains(line, "conversation=main") {
			mainLines = append(mainLines, line)
			for _, f := range strings.Fields(line) {
				if s, ok := strings.CutPrefix(f, "session="); ok {
					sessions[s] = true
				}
			}
		}
		if strings.Contains(line, "(unmatched)") {
			t.Errorf("an unmatched request: %s", line)
		}
	}
	if len(mainLines) != 2 || len(sessions) != 2 {
		t.Fatalf("main requests logged = %d over %d sessions, want 2 over 2:\n%s", len(mainLines), len(sessions), srv.stderr.String())
	}
	for _, l := range mainLines {
		if !strings.Contains(l, "reply=0 model=") || !strings.Contains(l, "status=200") {
			t.Errorf("log line %q: want reply=0, a model and status=200", l)
		}
	}
}
