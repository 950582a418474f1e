package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"
)

// TestWakeStateCommand: the probe reports the brief it finds and leaves the
// workspace byte-identical.
func TestWakeStateCommand(t *testing.T) {
	ws := t.TempDir()
	notes := filepath.Join(ws, ".flower", "notes")
	os.MkdirAll(notes, 0o755)
	os.WriteFile(filepath.Join(notes, "需求.md"), []byte("## 目标\nx\n## 验收标准\ny\n## 边界\nz\n## 未知与假设\nw\n"), 0o644)
	before := treeHash(t, ws)
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"flower", "wake-state", "-C", ws, "--run-dir", filepath.Join(ws, "runs"), "--json"}, nil, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !gjson.Get(out.String(), "wake").Bool() || !gjson.Get(out.String(), "has_brief").Bool() {
		t.Errorf("wake-state: %s", out.String())
	}
	if treeHash(t, ws) != before {
		t.Error("wake-state wrote into the workspace")
	}
	if code := Main(context.Background(), []string{"flower", "wake-state", "extra"}, nil, &out, &errb); code != 2 {
		t.Errorf("stray argument: exit %d", code)
	}
}
