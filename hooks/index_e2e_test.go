package hooks_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/flowerhq/flower/hooks"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

func TestE2E_IndexRefreshedOnWorkbenchWrite(t *testing.T) {
	t.Parallel()
	hook := testbed.BuildBinary(t, "./cmd/flower-hook")
	bed := mainBed(t, "index test",
		tool("Write", map[string]any{"file_path": "WS/.flower/artifacts/report.md", "content": "# report\n"}),
		tool("Write", map[string]any{"file_path": "WS/.flower/scripts/check.sh", "content": "#!/bin/sh\n# desc: checks the build\necho ok\n"}),
		scripted.Reply{Text: "index done"})
	wb := filepath.Join(bed.Workspace, ".flower")
	settings := writeSettings(t, bed.Home, hookEntry{"PostToolUse", hooks.IndexTools, hook + " index --dir " + wb})
	run := runClaude(t, bed, nil, "index test", "--settings", settings, "--permission-mode", "acceptEdits")
	if run.Result.Get("result").String() != "index done" {
		t.Fatalf("exit %d result %s", run.ExitCode, run.Result.Raw)
	}
	idx, err := os.ReadFile(filepath.Join(wb, hooks.IndexFile))
	if err != nil || !bytes.Contains(idx, []byte("artifacts/report.md")) || !bytes.Contains(idx, []byte("scripts/check.sh — checks the build")) {
		t.Errorf("INDEX.md not refreshed: %v\n%s", err, idx)
	}
}
