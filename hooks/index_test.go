package hooks

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, path, text string, age time.Duration) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	when := time.Now().Add(-age)
	if err := os.Chtimes(path, when, when); err != nil {
		t.Fatal(err)
	}
}

func TestScriptDesc(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ name, text, want string }{
		{"hash desc", "#!/bin/sh\n# desc: counts the lines\necho\n", "counts the lines"},
		{"slash desc", "package main\n// desc: go helper\n", "go helper"},
		{"dash desc", "-- desc: sql report\nselect 1;\n", "sql report"},
		{"desc on line 8", strings.Repeat("x\n", 7) + "# desc: late\n", "late"},
		{"desc on line 9 ignored", "#!/bin/sh\n" + strings.Repeat("x\n", 7) + "# desc: too late\n", ""},
		{"first comment", "#!/usr/bin/env python3\n\n# fetches the data\nimport x\n", "fetches the data"},
		{"docstring", "import os\n\"\"\"Summarises logs.\"\"\"\n", "Summarises logs."},
		{"docstring next line", "'''\nMulti line doc\n'''\n", "Multi line doc"},
		{"nothing", "echo hi\n", ""},
		{"clipped", "# desc: " + strings.Repeat("長", 150) + "\n", strings.Repeat("長", 100)},
	}
	for _, tt := range tests {
		p := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_"))
		write(t, p, tt.text, 0)
		if got := ScriptDesc(p); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	if ScriptDesc(filepath.Join(dir, "missing")) != "" {
		t.Error("missing file has a description")
	}
}

func TestRefreshIndex(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "scripts", "count.sh"), "# desc: counts\n", 2*time.Hour)
	write(t, filepath.Join(root, "artifacts", "old.md"), "old", 3*time.Hour)
	write(t, filepath.Join(root, "artifacts", "new.md"), strings.Repeat("n", 2048), time.Hour)
	write(t, filepath.Join(root, "artifacts", ".hidden"), "h", 0)
	write(t, filepath.Join(root, "spill", "0123456789abcdef.txt"), "s", 0)
	for i := range 5 {
		write(t, filepath.Join(root, "notes", "n"+string(rune('a'+i))+".md"), "x", time.Duration(i)*time.Minute)
	}
	if err := RefreshIndex(root, 3); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	idx := string(b)
	for _, want := range []string{"- scripts/count.sh — counts", "- artifacts/new.md (2.0 KB)", "- artifacts/old.md (3 B)",
		"- notes/na.md", "- notes/nc.md", fmt.Sprintf(indexMore, 2)} {
		if !strings.Contains(idx, want) {
			t.Errorf("index lacks %q:\n%s", want, idx)
		}
	}
	if strings.Index(idx, "new.md") > strings.Index(idx, "old.md") {
		t.Error("not newest first")
	}
	for _, not := range []string{".hidden", "spill", "notes/nd.md"} {
		if strings.Contains(idx, not) {
			t.Errorf("index lists %q", not)
		}
	}
}

func TestIndexGuard(t *testing.T) {
	root := t.TempDir()
	other := t.TempDir()
	in := func(path string) Input {
		b, _ := json.Marshal(map[string]string{"file_path": path})
		return Input{ToolName: "Write", ToolInput: b, Cwd: root}
	}
	tests := []struct {
		name    string
		in      Input
		refresh bool
	}{
		{"inside", in(filepath.Join(root, "artifacts", "r.md")), true},
		{"relative inside", in("notes/n.md"), true},
		{"outside", in(filepath.Join(other, "x.md")), false},
		{"sneaky dotdot", in(filepath.Join(root, "..", filepath.Base(other), "x.md")), false},
		{"root itself", in(root), false},
		{"notebook", Input{ToolName: "NotebookEdit", ToolInput: json.RawMessage(`{"notebook_path":"` + filepath.Join(root, "a.ipynb") + `"}`)}, true},
		{"bad input", Input{ToolName: "Write", ToolInput: json.RawMessage(`[`)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(filepath.Join(root, IndexFile))
			d := Index(tt.in, root, 0)
			_, err := os.Stat(filepath.Join(root, IndexFile))
			if d.Verdict != Pass || (err == nil) != tt.refresh {
				t.Errorf("verdict %s, INDEX.md written %v, want %v", d.Verdict, err == nil, tt.refresh)
			}
		})
	}
}
