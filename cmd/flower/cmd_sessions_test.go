package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSessionsListSaysWhereItLooked: without a store in the workspace,
// sessions list is no failure (as runs): it names where it looked and
// where flower claude keeps its sessions; --json is an empty array.
// Control: with no drop-in store either, no pointer is made up.
func TestSessionsListSaysWhereItLooked(t *testing.T) {
	ws, dropIn := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(dropIn, "sessions.db"), nil, 0o600)
	for _, tc := range []struct {
		dropIn, want string
	}{{dropIn, "flower claude's sessions are in " + filepath.Join(dropIn, "sessions.db")}, {t.TempDir(), ""}} {
		e, out, errb := testEnv("")
		e.Getenv = func(k string) string { return map[string]string{"FLOWER_RUN_DIR": tc.dropIn}[k] }
		if code := run(context.Background(), e, []string{"flower", "sessions", "list", "-C", ws}); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		looked := "no session store at " + filepath.Join(ws, ".flower", "runs", "sessions.db")
		if !strings.Contains(out.String(), looked) || strings.Contains(out.String(), "flower claude") != (tc.want != "") || !strings.Contains(out.String(), tc.want) {
			t.Errorf("sessions list: %q", out.String())
		}
		e, out, _ = testEnv("")
		if code := run(context.Background(), e, []string{"flower", "sessions", "list", "-C", ws, "--json"}); code != 0 || strings.TrimSpace(out.String()) != "[]" {
			t.Errorf("--json: exit %d %q", code, out.String())
		}
	}
}
