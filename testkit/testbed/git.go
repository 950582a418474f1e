package testbed

import (
	"testing"
)

// GitInit makes dir a git repository with one empty commit (isolation
// needs a git workspace).
func GitInit(t testing.TB, dir string) {
	t.Helper()
	for _, args := range [][]string{
		{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "init"},
	} {
		cmd := Command(t, "git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
}
