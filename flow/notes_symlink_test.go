package flow

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/flowerhq/flower/harness"
)

// flower's own notes (the Q&A log, the brief and goal through docs.Write,
// a handoff note) are never written through a symlink out of the
// workbench: a linked notes folder is refused, a linked log is not
// appended through, a linked brief is replaced rather than followed.
// Control: the same writes into a real folder land.
func TestNotesNeverLeaveThroughASymlink(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(root, "outside")
	real := filepath.Join(root, "wb", "real")
	linked := filepath.Join(root, "wb", "notes")
	for _, d := range []string{outside, real} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, linked); err != nil {
		t.Fatal(err)
	}
	empty := func(t *testing.T) {
		t.Helper()
		if left, _ := os.ReadDir(outside); len(left) != 0 {
			t.Fatalf("wrote outside the workbench: %v", left)
		}
	}
	if err := NewHumanChannel(filepath.Join(linked, DefaultLogName), "", nil).logLine("## 留言", "x"); err == nil {
		t.Error("the Q&A log was appended in a symlinked folder")
	}
	if _, err := (Brief{Goal: "g"}).Write(filepath.Join(linked, DefaultBriefName)); err == nil {
		t.Error("the brief was written into a symlinked folder")
	}
	h := &harness.Handoff{Step: "执行"}
	if err := h.Write(linked); err == nil {
		t.Error("a handoff note was written into a symlinked folder")
	}
	empty(t)

	// A symlinked file in a real folder: the log refuses it, the brief
	// replaces the link.
	target := filepath.Join(outside, "target.md")
	for _, name := range []string{DefaultLogName, DefaultBriefName} {
		if err := os.Symlink(target, filepath.Join(real, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := NewHumanChannel(filepath.Join(real, DefaultLogName), "", nil).logLine("## 留言", "x"); err == nil {
		t.Error("the Q&A log was appended through a symlink")
	}
	if _, err := (Brief{Goal: "g"}).Write(filepath.Join(real, DefaultBriefName)); err != nil {
		t.Errorf("brief over a symlink: %v", err)
	}
	if st, err := os.Lstat(filepath.Join(real, DefaultBriefName)); err != nil || !st.Mode().IsRegular() {
		t.Errorf("the brief's link was not replaced by a file: %v %v", st, err)
	}
	empty(t)

	// Control: a real folder takes all three.
	ctl := filepath.Join(root, "wb", "ctl")
	if err := NewHumanChannel(filepath.Join(ctl, DefaultLogName), "", nil).logLine("## 留言", "x"); err != nil {
		t.Error(err)
	}
	if _, err := (Brief{Goal: "g"}).Write(filepath.Join(ctl, DefaultBriefName)); err != nil {
		t.Error(err)
	}
	if err := h.Write(ctl); err != nil {
		t.Error(err)
	}
	if n, _ := os.ReadDir(ctl); len(n) != 3 {
		t.Errorf("control: %d files in the real folder, want 3", len(n))
	}
}
