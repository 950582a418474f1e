package selftestmark

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestMark: a written mark holds its key; another binary (a changed
// modification time) has another key, which the mark does not hold; a
// missing binary has no key; the mark is private.
func TestMark(t *testing.T) {
	dir := t.TempDir()
	claude, hook := filepath.Join(dir, "claude"), filepath.Join(dir, "flower-hook")
	for _, p := range []string{claude, hook} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	key, err := Key(claude, hook)
	if err != nil {
		t.Fatal(err)
	}
	if Holds(dir, key) {
		t.Fatal("control: a run dir without a mark holds the key")
	}
	if err := Write(dir, key); err != nil {
		t.Fatal(err)
	}
	if !Holds(dir, key) {
		t.Fatal("the written mark does not hold its key")
	}
	if st, err := os.Stat(filepath.Join(dir, File)); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mark: %v, %v", st, err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(hook, later, later); err != nil {
		t.Fatal(err)
	}
	if again, _ := Key(claude, hook); again == key || Holds(dir, again) {
		t.Fatal("a changed flower-hook keeps the key")
	}
	if _, err := Key(claude, filepath.Join(dir, "absent")); err == nil {
		t.Fatal("a missing flower-hook has a key")
	}
}
