package harness

import "encoding/json"
import "errors"
import "fmt"
import "io/fs"
import "os"
import "path/filepath"
import "sync"
import "syscall"
import "time"

import "github.com/gofrs/flock"

import "github.com/flowerhq/flower/internal/atomicfile"
import "github.com/flowerhq/flower/internal/redact"

// ManifestRow is one run's row of <run_dir>/manifest.json. Running lists
// the steps under way (with the pid of the flower running them); a row
// whose flower died keeps them until the run dir is next opened, when
// RecoverRunDir turns each into a failed result marked killed mid-step.
type ManifestRow struct {
	Run       string        `json:"run"`
	Workspace string        `json:"workspace"`
	StartedAt float64       `json:"started_at"`
	UpdatedAt float64       `json:"updated_at"`
	Results   []StepResult  `json:"results"`
	Running   []RunningStep `json:"running,omitempty"`
}

// RunningStep is a step under way.
type RunningStep struct {
	Step      string  `json:"step"`
	PID       int     `json:"pid"`
	StartedAt float64 `json:"started_at"`
}

// KilledMidStep starts the Error of a step whose flower died while it ran.
const KilledMidStep = "harness: killed mid-step"

// ErrManifestDamaged is wrapped by ReadManifest's error when manifest.json
// holds something that is not a JSON array of rows.
var ErrManifestDamaged = errors.New("manifest does not parse")

// ReadManifest returns the rows of manifest.json (a JSON array); a missing
// file is no rows.
func ReadManifest(path string) ([]ManifestRow, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(data) == 0) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("harness: manifest: %w", err)
	}
	var rows []ManifestRow
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, fmt.Errorf("harness: manifest %s: %w: %v", path, ErrManifestDamaged, err)
	}
	return rows, nil
}

// WriteManifestRow stores row in manifest.json with the seed's append
// semantics: under an exclusive file lock, read the disk, replace the row
// with the same run (keep every other), write the file atomically (fsync'd
// file and folder, 0600). Safe for several flower processes in one run dir.
//
// A manifest that does not parse never stops a step: it is moved aside to
// manifest.json.corrupt-<time>, one warning goes to stderr, and a fresh
// manifest starts with row.
func WriteManifestRow(path string, row ManifestRow) error {
	return writeRow(path, row, nil)
}

func writeRow(path string, row ManifestRow, red *redact.Redactor) error {
	return updateManifest(path, red, func(rows []ManifestRow) ([]ManifestRow, bool) {
		for i := range rows {
			if rows[i].Run == row.Run {
				rows[i] = row
				return rows, true
			}
		}
		return append(rows, row), true
	})
}

// RecoverRunDir is run when a Runtime opens runDir: every step a dead
// flower left Running becomes a failed result whose Error starts with
// KilledMidStep; temp files of a manifest write cut short and report sockets
// of dead flowers are removed. (The flock lock file stays: the kernel drops
// a dead holder's lock, and deleting the file under a waiter would split the
// lock.) It reports how many steps it marked.
func RecoverRunDir(runDir string) (int, error) {
	removeDeadSockets()
	path := filepath.Join(runDir, "manifest.json")
	if _, err := os.Stat(path); err != nil {
		return 0, nil
	}
	marked := 0
	err := updateManifest(path, nil, func(rows []ManifestRow) ([]ManifestRow, bool) {
		// Under the lock no write is under way: a temp file of the atomic
		// writer is what a process killed mid-write left.
		tmps, _ := filepath.Glob(filepath.Join(runDir, ".manifest.json.tmp*"))
		for _, t := range tmps {
			os.Remove(t)
		}
		now := unixNow()
		for i := range rows {
			var live []RunningStep
			for _, s := range rows[i].Running {
				if processAlive(s.PID) {
					live = append(live, s)
					continue
				}
				marked++
				msg := fmt.Sprintf("%s: flower (pid %d) ended while the step ran", KilledMidStep, s.PID)
				rows[i].Results = append(rows[i].Results, StepResult{Step: s.Step, StartedAt: s.StartedAt, EndedAt: now,
					Attempts: 1, Error: msg, Errors: []string{msg}, Retired: []string{}})
				rows[i].UpdatedAt = now
			}
			rows[i].Running = live
		}
		// Nothing marked: the file on disk is already right, and a write
		// (two fsyncs) would only delay the step.
		return rows, marked > 0
	})
	return marked, err
}

// processAlive reports whether pid names a process (of any owner).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// updateManifest applies change to the rows on disk under the manifest
// lock and, when change reports a change, writes the result, redacted by
// red.
func updateManifest(path string, red *redact.Redactor, change func([]ManifestRow) ([]ManifestRow, bool)) error {
	if err := privateDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("harness: manifest: %w", err)
	}
	lk := flock.New(path + ".lock")
	if err := lk.Lock(); err != nil {
		return fmt.Errorf("harness: manifest lock: %w", err)
	}
	defer lk.Unlock()
	os.Chmod(path+".lock", 0o600) // flock creates it 0644; narrowing only
	rows, err := ReadManifest(path)
	if errors.Is(err, ErrManifestDamaged) {
		aside := path + ".corrupt-" + time.Now().UTC().Format("20060102T150405.000000000Z")
		if rerr := os.Rename(path, aside); rerr != nil {
			return fmt.Errorf("harness: manifest: moving the damaged one aside: %w", rerr)
		}
		fmt.Fprintf(os.Stderr, "flower: warning: %s did not parse (%v); moved it to %s and started a fresh one\n",
			path, errors.Unwrap(err), filepath.Base(aside))
		rows, err = nil, nil
	}
	if err != nil {
		return err
	}
	rows, changed := change(rows)
	if !changed {
		return nil
	}
	data, err := json.MarshalIndent(rows, "", "  ")
	if err != nil {
		return fmt.Errorf("harness: manifest: %w", err)
	}
	if err := atomicfile.Write(path, append(red.Bytes(data), '\n'), 0o600); err != nil {
		return fmt.Errorf("harness: manifest: %w", err)
	}
	return nil
}

// eventLog appends Events as JSON lines to <run_dir>/<run>/events.jsonl.
type eventLog struct {
	mu  sync.Mutex
	f   *os.File
	red *redact.Redactor
}

// openEventLog opens path for appending (0600); red keeps secrets out.
func openEventLog(path string, red *redact.Redactor) (*eventLog, error) {
	if err := privateDir(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("harness: events: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("harness: events: %w", err)
	}
	return &eventLog{f: f, red: red}, nil
}

func (l *eventLog) write(ev Event) {
	data, err := json.Marshal(ev)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		l.f.Write(append(l.red.Bytes(data), '\n'))
	}
}

func (l *eventLog) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// stepBegins lists step as running in this run's manifest row, so that a
// flower killed mid-step leaves a trace RecoverRunDir can mark. The write
// (two fsyncs) runs beside claude's start instead of before it; the
// returned channel is closed once it is done, and stepEnds must wait for
// it. A failure to write is left to stepEnds to report.
func (r *Runtime) stepBegins(step string, started float64) <-chan struct{} {
	r.mu.Lock()
	r.running = append(r.running, RunningStep{Step: step, PID: os.Getpid(), StartedAt: started})
	r.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.manifestMu.Lock()
		defer r.manifestMu.Unlock()
		r.mu.Lock()
		row := r.rowLocked()
		r.mu.Unlock()
		r.writeRow(row)
	}()
	return done
}

// stepEnds adds res to this run's row (and takes its step off Running).
func (r *Runtime) stepEnds(res StepResult) error {
	r.manifestMu.Lock()
	defer r.manifestMu.Unlock()
	r.mu.Lock()
	r.results = append(r.results, res)
	for i, s := range r.running {
		if s.Step == res.Step {
			r.running = append(r.running[:i:i], r.running[i+1:]...)
			break
		}
	}
	row := r.rowLocked()
	r.mu.Unlock()
	return r.writeRow(row)
}

// rowLocked is this run's manifest row; r.mu is held.
func (r *Runtime) rowLocked() ManifestRow {
	return ManifestRow{Run: r.run, Workspace: r.workspace, StartedAt: r.started, UpdatedAt: unixNow(),
		Results: append([]StepResult(nil), r.results...), Running: append([]RunningStep(nil), r.running...)}
}

func (r *Runtime) writeRow(row ManifestRow) error { return writeRow(r.ManifestPath(), row, r.red) }
