package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	if err := Write(p, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "two" {
		t.Fatalf("content %q", b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("temp files left: %v", ents)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %o, want 600", st.Mode().Perm())
	}
}

// A mode found on disk is never widened; a new file gets perm exactly
// (the control: without a file there, 0o640 stays 0o640).
func TestWriteNeverWidens(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		found, perm, want os.FileMode
	}{
		{0, 0o640, 0o640},
		{0o600, 0o644, 0o600},
		{0o640, 0o600, 0o600},
		{0o400, 0o600, 0o400},
	} {
		p := filepath.Join(dir, "f")
		os.Remove(p)
		if tc.found != 0 {
			if err := os.WriteFile(p, nil, tc.found); err != nil {
				t.Fatal(err)
			}
			os.Chmod(p, tc.found)
		}
		if err := Write(p, []byte("x"), tc.perm); err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Stat(p); st.Mode().Perm() != tc.want {
			t.Errorf("found %o, perm %o: got %o, want %o", tc.found, tc.perm, st.Mode().Perm(), tc.want)
		}
	}
}

func TestWriteMissingDir(t *testing.T) {
	if err := Write(filepath.Join(t.TempDir(), "no", "f"), []byte("x"), 0o600); err == nil {
		t.Fatal("wrote into a missing folder")
	}
}

// TestCommit: a streamed temp file replaces the target and leaves nothing
// behind; a temp file that cannot be renamed (its target is a folder) is
// removed and the target stays.
func TestCommit(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.CreateTemp(dir, ".f.tmp*")
	if err != nil {
		t.Fatal(err)
	}
	tmp.WriteString("new")
	if err := Commit(tmp, p); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("content %q, want new", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
	blocked := filepath.Join(dir, "sub")
	if err := os.MkdirAll(filepath.Join(blocked, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	tmp, _ = os.CreateTemp(dir, ".sub.tmp*")
	if err := Commit(tmp, blocked); err == nil {
		t.Error("renamed a file over a non-empty folder")
	}
	if _, err := os.Stat(tmp.Name()); !os.IsNotExist(err) {
		t.Errorf("temp file kept after a failed commit: %v", err)
	}
}
