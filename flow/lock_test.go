package flow

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flowerhq/flower/hooks"
)

// TestLockWorkspace: one holder at a time; the one turned away learns the
// holder's run and pid; the probe creates nothing; Unlock frees it.
func TestLockWorkspace(t *testing.T) {
	ws := t.TempDir()
	if err := CheckWorkspace(ws); err != nil {
		t.Fatalf("free workspace: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, ".flower")); err == nil {
		t.Error("the probe created .flower")
	}
	l, err := LockWorkspace(ws, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(lockPath(ws)); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("lock file: %v %v", st, err)
	}
	for name, err := range map[string]error{"probe": CheckWorkspace(ws), "lock": func() error { _, err := LockWorkspace(ws, "run-2"); return err }()} {
		var be *BusyError
		if !errors.As(err, &be) || be.Run != "run-1" || be.PID != os.Getpid() {
			t.Fatalf("%s while held: %v", name, err)
		}
		for _, s := range []string{"run run-1", "pid " + strconv.Itoa(os.Getpid()), "flower tell -C " + ws} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: message lacks %q: %s", name, s, err)
			}
		}
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	l2, err := LockWorkspace(ws, "run-3")
	if err != nil {
		t.Fatalf("after Unlock: %v", err)
	}
	defer l2.Unlock()
	if b, _ := os.ReadFile(lockPath(ws)); string(b) != strconv.Itoa(os.Getpid())+" run-3\n" {
		t.Errorf("lock text %q", b)
	}
	if got := (&BusyError{Workspace: ws}).Error(); !strings.Contains(got, "another flow") {
		t.Errorf("holder unknown: %s", got)
	}
}

// TestLockWorkspaceForNamesTheWorker: a queued flow's lock names its
// worker to the flow turned away; the control, a lock without a holder,
// does not.
func TestLockWorkspaceForNamesTheWorker(t *testing.T) {
	for _, holder := range []string{"queued job 3 on worker m1", ""} {
		ws := t.TempDir()
		l, err := LockWorkspaceFor(ws, "run-1", holder)
		if err != nil {
			t.Fatal(err)
		}
		_, err = LockWorkspace(ws, "run-2")
		var be *BusyError
		if !errors.As(err, &be) || be.Holder != holder || strings.Contains(err.Error(), "worker m1") != (holder != "") {
			t.Errorf("holder %q: %v (%+v)", holder, err, be)
		}
		l.Unlock()
	}
}

// The plugin's fence protects the starter's notes by name (hooks cannot
// import flow): its list is the starter's defaults, and its lock is
// lockPath.
func TestPluginFenceKnowsTheStarterNames(t *testing.T) {
	if got, want := hooks.StarterRecords, []string{DefaultBriefName, DefaultGoalName, DefaultLogName}; !slices.Equal(got, want) {
		t.Errorf("hooks.StarterRecords = %q, want %q", got, want)
	}
	ws := t.TempDir()
	if !slices.Contains(hooks.ProjectFence(ws, nil).Protected, lockPath(ws)) {
		t.Errorf("the plugin's fence does not protect %s", lockPath(ws))
	}
}
