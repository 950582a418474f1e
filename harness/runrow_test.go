package harness

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestRunRow_BeginEnd: a step that begins is listed as running in the row
// on disk (with this flower's pid) once its write is done, and its end
// replaces that with its result; a step running beside it stays listed
// until its own end. A result text over maxRowText is written to its own
// file once, however often the row is written again, and the row points at
// it. Control: before any begin the manifest does not exist.
func TestRunRow_BeginEnd(t *testing.T) {
	dir := t.TempDir()
	w := &runRow{path: filepath.Join(dir, "manifest.json"), runDir: dir, run: "r1", workspace: dir, started: 1}
	onDisk := func() ManifestRow {
		t.Helper()
		rows, err := ReadManifest(w.path)
		if err != nil || len(rows) != 1 || rows[0].Run != "r1" || rows[0].Workspace != dir || rows[0].StartedAt != 1 {
			t.Fatalf("manifest %+v, %v; want the one row of r1", rows, err)
		}
		return rows[0]
	}
	if _, err := os.Stat(w.path); !os.IsNotExist(err) {
		t.Fatalf("control: a manifest before any step (%v)", err)
	}
	<-w.begin("a", 2)
	<-w.begin("b", 3)
	row := onDisk()
	want := []RunningStep{{Step: "a", PID: os.Getpid(), StartedAt: 2}, {Step: "b", PID: os.Getpid(), StartedAt: 3}}
	if len(row.Results) != 0 || !reflect.DeepEqual(row.Running, want) {
		t.Fatalf("after two begins: %+v", row)
	}
	big := strings.Repeat("x", maxRowText+1)
	a := StepResult{Step: "a", OK: true, Text: big, StartedAt: 2, EndedAt: 4, Attempts: 1, Errors: []string{}, Retired: []string{}}
	if err := w.end(a); err != nil {
		t.Fatal(err)
	}
	row = onDisk()
	if len(row.Results) != 1 || row.Results[0].TextFile == "" || row.Results[0].TextBytes != len(big) || !reflect.DeepEqual(row.Running, want[1:]) {
		t.Fatalf("after a's end: results %+v, running %+v", row.Results, row.Running)
	}
	b := StepResult{Step: "b", Error: "no", StartedAt: 3, EndedAt: 5, Attempts: 1, Errors: []string{"no"}, Retired: []string{}}
	if err := w.end(b); err != nil {
		t.Fatal(err)
	}
	row = onDisk()
	if len(row.Results) != 2 || row.Results[1].Step != "b" || len(row.Running) != 0 {
		t.Fatalf("after b's end: %+v", row)
	}
	if texts, _ := filepath.Glob(filepath.Join(dir, "texts", "*")); len(texts) != 1 {
		t.Fatalf("text files %v; want a's text written once", texts)
	}
	if text, err := ResultText(dir, row.Results[0]); err != nil || text != big {
		t.Fatalf("a's text from its file: %d bytes, %v", len(text), err)
	}
	if got := w.finished(); len(got) != 2 || got[0].Text != big || !reflect.DeepEqual(got[1], b) {
		t.Fatalf("finished: %+v", got)
	}
}
