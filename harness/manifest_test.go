package harness

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestManifestLayout: rows are updated without decoding the others, and
// the file stays exactly what json.MarshalIndent(rows, "", "  ") writes
// (plus a newline), whatever the order of adds and replaces; a row holding
// characters MarshalIndent escapes keeps them escaped.
func TestManifestLayout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "manifest.json")
	rows := []ManifestRow{
		{Run: "a", Workspace: "/w", StartedAt: 1, Results: []StepResult{{Step: "s", OK: true, Text: "<b>&</b>", Errors: []string{}, Retired: []string{}}}},
		{Run: "b", Workspace: "/w", StartedAt: 2, Running: []RunningStep{{Step: "t", PID: 1, StartedAt: 2}}},
		{Run: "a", Workspace: "/w", StartedAt: 1, Results: []StepResult{{Step: "s", OK: true}, {Step: "u", Error: "x\ny"}}},
		{Run: "c", Workspace: "/w", StartedAt: 3},
		{Run: "b", Workspace: "/w", StartedAt: 2, Results: []StepResult{{Step: "t", OK: true}}},
	}
	var want []ManifestRow
	for _, r := range rows {
		if err := WriteManifestRow(path, r); err != nil {
			t.Fatal(err)
		}
		replaced := false
		for i := range want {
			if want[i].Run == r.Run {
				want[i], replaced = r, true
			}
		}
		if !replaced {
			want = append(want, r)
		}
		exp, err := json.MarshalIndent(want, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, append(exp, '\n')) {
			t.Fatalf("after writing run %s the file is\n%s\nwant\n%s", r.Run, got, exp)
		}
	}
}

// TestManifestNotAnArrayOfObjects: an array whose elements are not rows is
// damaged (moved aside), not kept beside the new row.
func TestManifestNotAnArrayOfObjects(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "manifest.json")
	if err := os.WriteFile(path, []byte("[1, 2]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteManifestRow(path, ManifestRow{Run: "r"}); err != nil {
		t.Fatal(err)
	}
	rows, err := ReadManifest(path)
	if err != nil || len(rows) != 1 || rows[0].Run != "r" {
		t.Fatalf("rows %+v, %v; want only the new row", rows, err)
	}
	if aside, _ := filepath.Glob(path + ".corrupt-*"); len(aside) != 1 {
		t.Fatalf("moved aside: %v; want the damaged file kept", aside)
	}
}
