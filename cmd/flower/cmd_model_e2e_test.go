package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/testkit/testbed"
)

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
	srv := flowerbin.StartModel(t, flower, nil, "serve", "--script", script, "--addr", "127.0.0.1:0", "-v")

	ws, home := filepath.Join(dir, "ws"), filepath.Join(dir, "home")
	os.MkdirAll(ws, 0o700)
	os.MkdirAll(home, 0o700)
	env := flowerbin.Env(t, testbed.BaseEnv(home, srv.URL), claude)
	for run := 1; run <= 2; run++ {
		cmd := testbed.Command(t, flower, "step", "-C", ws, "--run-dir", filepath.Join(dir, "runs"), "say the scripted words")
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "SCRIPTED-WORDS-ÄÖ") {
			t.Fatalf("run %d: %v\n%s\nserver: %s", run, err, flowerbin.Tail(out), srv.Stderr())
		}
	}
	srv.Stop(t)
	var mainLines []string
	sessions := map[string]bool{}
	for _, line := range strings.Split(srv.Stderr(), "\n") {
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
		t.Fatalf("main requests logged = %d over %d sessions, want 2 over 2:\n%s", len(mainLines), len(sessions), srv.Stderr())
	}
	for _, l := range mainLines {
		if !strings.Contains(l, "reply=0 model=") || !strings.Contains(l, "status=200") {
			t.Errorf("log line %q: want reply=0, a model and status=200", l)
		}
	}
}
