package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tidwall/gjson"
)

// RecoverRunDir is run when a Runtime opens runDir: every step a dead
// flower left Running becomes a failed result whose Error starts with
// KilledMidStep; temp files of a manifest write cut short and report sockets
// of dead flowers are removed (at once when a row lists running steps, else
// in the background, at most once a minute per run dir: a run dir keeps
// every run, and listing it is not free). (The flock lock file stays: the
// kernel drops a dead holder's lock, and deleting the file under a waiter
// would split the lock.) It reports how many steps it marked.
func RecoverRunDir(runDir string) (int, error) {
	sweepSockets.Do(func() { go sweepRunDir(runDir) })
	path := filepath.Join(runDir, "manifest.json")
	data, err := os.ReadFile(path)
	if err != nil || !bytes.Contains(data, []byte(`"running":`)) {
		// Nothing to mark (a row lists running steps only while they
		// run): no lock, no parse.
		return 0, nil
	}
	marked := 0
	err = updateManifest(path, nil, func(rows []json.RawMessage) ([]json.RawMessage, bool) {
		removeLeftoverTemps(runDir)
		for i := range rows {
			if !gjson.GetBytes(rows[i], "running").Exists() {
				continue
			}
			var row ManifestRow
			if json.Unmarshal(rows[i], &row) != nil {
				continue
			}
			removeSpools(runDir, row.Run, row.Running)
			if n := markDead(&row); n > 0 {
				if enc, err := encodeRow(row); err == nil {
					rows[i] = enc
					marked += n
				}
			}
		}
		// Nothing marked: the file on disk is already right, and a write
		// (two fsyncs) would only delay the step.
		return rows, marked > 0
	})
	return marked, err
}

// sweepSockets runs sweepRunDir once per process.
var sweepSockets sync.Once

// sweepRunDir removes the temp files of manifest writes cut short and the
// dead report sockets (removeDeadSockets), unless a flower of this run dir
// did in the last minute (the time of runDir/.sockets-swept says when):
// the sweep lists the run dir and the whole temp folder, and flower starts
// once a step.
func sweepRunDir(runDir string) {
	mark := filepath.Join(runDir, ".sockets-swept")
	if st, err := os.Lstat(mark); err == nil && st.Mode().IsRegular() && time.Since(st.ModTime()) < time.Minute {
		return
	}
	now := time.Now()
	if os.WriteFile(mark, nil, 0o600) != nil || os.Chtimes(mark, now, now) != nil {
		return
	}
	if lk, err := lockManifest(filepath.Join(runDir, "manifest.json")); err == nil {
		removeLeftoverTemps(runDir)
		lk.Unlock()
	}
	removeDeadSockets()
}

// removeLeftoverTemps removes the temp files of manifest writes in runDir.
// The manifest lock must be held: no write is under way then, and a temp
// file is what a process killed mid-write left.
func removeLeftoverTemps(runDir string) {
	tmps, _ := filepath.Glob(filepath.Join(runDir, ".manifest.json.tmp*"))
	for _, t := range tmps {
		os.Remove(t)
	}
}

// removeSpools removes what the attempts of run's dead steps spooled (the
// rest of big stream texts, not redacted yet: an attempt removes its own
// spool when it ends, a killed flower cannot).
func removeSpools(runDir, run string, steps []RunningStep) {
	for _, s := range steps {
		if processAlive(s.PID) {
			continue
		}
		spools, _ := filepath.Glob(filepath.Join(runDir, run, stepDirName(s.Step), ".spool-*"))
		for _, p := range spools {
			os.Remove(p)
		}
	}
}

// markDead turns the running steps of row whose flower is gone into failed
// results and reports how many.
func markDead(row *ManifestRow) int {
	now := unixNow()
	var live []RunningStep
	marked := 0
	for _, s := range row.Running {
		if processAlive(s.PID) {
			live = append(live, s)
			continue
		}
		marked++
		msg := fmt.Sprintf("%s: flower (pid %d) ended while the step ran", KilledMidStep, s.PID)
		row.Results = append(row.Results, StepResult{Step: s.Step, StartedAt: s.StartedAt, EndedAt: now,
			Attempts: 1, Error: msg, Errors: []string{msg}, Retired: []string{}})
		row.UpdatedAt = now
	}
	row.Running = live
	return marked
}

// processAlive reports whether pid names a process (of any owner).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// removeDeadSockets removes the socket folders (flower-sock-*, flower-ch-*)
// a killed flower left in the temp dir: those of this user whose sockets
// all refuse connections.
func removeDeadSockets() {
	for _, pat := range []string{"flower-sock-*", "flower-ch-*"} {
		dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), pat))
		for _, d := range dirs {
			if st, err := os.Lstat(d); err != nil || !st.IsDir() || !ownedByMe(st) || time.Since(st.ModTime()) < time.Minute {
				continue // a young folder may be a flower starting now
			}
			socks, _ := filepath.Glob(filepath.Join(d, "*.sock"))
			if len(socks) > 0 && allRefuse(socks) {
				os.RemoveAll(d)
			}
		}
	}
}

func ownedByMe(st fs.FileInfo) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(sys.Uid) == os.Getuid()
}

func allRefuse(socks []string) bool {
	for _, s := range socks {
		c, err := net.DialTimeout("unix", s, time.Second)
		if err == nil {
			c.Close()
			return false
		}
		if !errors.Is(err, syscall.ECONNREFUSED) && !strings.Contains(err.Error(), "connection refused") {
			return false
		}
	}
	return true
}
