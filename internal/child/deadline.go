package child

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// DeadlineEnv, in the supervisor's environment, names a file holding a
// deadline (Unix milliseconds, wall clock) that its writer keeps moving
// forward: a queued flow's worker writes its lease's local deadline there
// at each renewal. When the deadline passes unmoved the supervisor kills
// the tree and exits 137, whatever the writer is doing (stopped with
// SIGSTOP, frozen, spinning): a claude never outlives the lease its worker
// holds, so the worker that takes the flow over never meets it in the
// workspace.
const DeadlineEnv = "FLOWER_DEADLINE_FILE"

// WriteDeadline writes d into the deadline file path (private, replaced
// whole so a reader never sees half of it).
func WriteDeadline(path string, d time.Time) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.FormatInt(d.UnixMilli(), 10)+"\n"), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ReadDeadline reads the deadline file path.
func ReadDeadline(path string) (time.Time, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return time.Time{}, false
	}
	ms, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(ms), true
}

// watchDeadline closes expired once the deadline in path has passed. A
// file that cannot be read keeps the last deadline read (none yet: it
// looks again each second); the deadline only moves forward, so a timer
// to it, re-read when it fires, is exact.
func watchDeadline(path string, expired chan<- struct{}) {
	var last time.Time
	for {
		if d, ok := ReadDeadline(path); ok && d.After(last) {
			last = d
		}
		wait := time.Second
		if !last.IsZero() {
			wait = time.Until(last)
			if wait <= 0 {
				close(expired)
				return
			}
		}
		time.Sleep(wait)
	}
}
