package flow

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gofrs/flock"
)

// lockFile is the name of a workspace's flow lock, in <workspace>/.flower.
const lockFile = "flow.lock"

// lockPath is where the flow lock of workspace lives: its own .flower
// folder, whatever the run dir or the workbench (isolate) is, so that two
// flows in one workspace meet there.
func lockPath(workspace string) string { return filepath.Join(workspace, ".flower", lockFile) }

// BusyError says that another flow holds the workspace's lock.
type BusyError struct {
	Workspace string
	Run       string // "" when the holder had not written it yet
	PID       int    // 0 likewise
	Holder    string // who holds it besides its run: a queued flow's worker ("" for flower "…")
}

// Who names the holder: its run, pid and, for a queued flow, its worker.
func (e *BusyError) Who() string {
	who := "another flow"
	if e.Run != "" {
		who = "run " + e.Run
	}
	if e.PID > 0 {
		who += " (pid " + strconv.Itoa(e.PID) + ")"
	}
	if e.Holder != "" {
		who += ", " + e.Holder
	}
	return who
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("a flow is already running in %s: %s. One flow per workspace: give it more words with "+
		"`flower tell -C %s \"…\"`, or wait until it ends and run flower again", e.Workspace, e.Who(), e.Workspace)
}

// WorkspaceLock is a held flow lock: an advisory flock(2) on lockPath,
// which the kernel drops when the process ends however it ends, so a killed
// flow cannot leave it stuck. The file's text ("<pid> <run>") only names
// the holder for the message of the flow that is turned away.
type WorkspaceLock struct {
	lk *flock.Flock
}

// CheckWorkspace reports whether a flow holds workspace's lock (a
// *BusyError) without creating anything: a workspace without a lock file
// is free. It is the early, side-effect-free probe; LockWorkspace takes it.
func CheckWorkspace(workspace string) error {
	p := lockPath(workspace)
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	l, err := LockWorkspace(workspace, "")
	if err != nil {
		return err
	}
	return l.Unlock()
}

// LockWorkspace takes workspace's flow lock for run, or returns a
// *BusyError naming the holder. The lock is held until Unlock or the
// process's end.
func LockWorkspace(workspace, run string) (*WorkspaceLock, error) {
	return LockWorkspaceFor(workspace, run, "")
}

// LockWorkspaceFor is LockWorkspace naming the holder besides its run (a
// queued flow: "queued job 3 on worker m1"), for the message of the flow
// turned away.
func LockWorkspaceFor(workspace, run, holder string) (*WorkspaceLock, error) {
	p := lockPath(workspace)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return nil, fmt.Errorf("flow: lock: %w", err)
	}
	lk := flock.New(p, flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o600))
	ok, err := lk.TryLock()
	if err != nil {
		return nil, fmt.Errorf("flow: lock %s: %w", p, err)
	}
	if !ok {
		return nil, busy(workspace, p)
	}
	if run != "" {
		// In place (never a rename: the lock is on this inode).
		text := strconv.Itoa(os.Getpid()) + " " + run
		if holder = strings.Join(strings.Fields(holder), " "); holder != "" {
			text += " " + holder
		}
		if err := os.WriteFile(p, []byte(text+"\n"), 0o600); err != nil {
			lk.Unlock()
			return nil, fmt.Errorf("flow: lock: %w", err)
		}
	}
	return &WorkspaceLock{lk: lk}, nil
}

// busy reads the holder's "<pid> <run>[ <holder>]" from the lock file.
func busy(workspace, path string) *BusyError {
	e := &BusyError{Workspace: workspace}
	b, _ := os.ReadFile(path)
	if f := strings.SplitN(strings.TrimSpace(string(b)), " ", 3); len(f) >= 2 {
		if pid, err := strconv.Atoi(f[0]); err == nil && pid > 0 {
			e.PID, e.Run = pid, f[1]
			if len(f) == 3 {
				e.Holder = f[2]
			}
		}
	}
	return e
}

// Unlock releases the lock (the file stays; an unlocked file is free).
func (l *WorkspaceLock) Unlock() error {
	if l == nil || l.lk == nil {
		return nil
	}
	return l.lk.Unlock()
}
