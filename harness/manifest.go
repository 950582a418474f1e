package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/gofrs/flock"
	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/internal/atomicfile"
	"github.com/flowerhq/flower/internal/redact"
)

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

// ReadManifestAround is ReadManifest for readers that must not stop at
// damage (`flower runs`): a manifest that does not parse gives the rows that
// still do (SalvageRows) and, as err, the damage (wrapping
// ErrManifestDamaged, with how many rows were lost). Nothing is moved.
func ReadManifestAround(path string) ([]ManifestRow, error) {
	rows, err := ReadManifest(path)
	if !errors.Is(err, ErrManifestDamaged) {
		return rows, err
	}
	data, _ := os.ReadFile(path)
	raw, lost := SalvageRows(data)
	rows = nil
	for _, r := range raw {
		var row ManifestRow
		if json.Unmarshal(r, &row) != nil {
			lost++
			continue
		}
		rows = append(rows, row)
	}
	return rows, fmt.Errorf("%w (%d rows read around the damage, %d lost)", err, len(rows), lost)
}

// SalvageRows cuts a damaged manifest into the rows that still parse as
// JSON objects, by the layout updateManifest writes (each row from a line
// "  {" to a line "  }" or "  },"), and counts the pieces that do not.
func SalvageRows(data []byte) (rows []json.RawMessage, lost int) {
	var cur []byte
	in := false
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		trim := bytes.TrimRight(line, "\r\n")
		switch {
		case string(trim) == "  {":
			if in {
				lost++
			}
			in, cur = true, append(cur[:0], "{\n"...)
		case in && (string(trim) == "  }" || string(trim) == "  },"):
			cur = append(cur, "  }"...)
			in = false
			if gjson.ValidBytes(cur) && gjson.ParseBytes(cur).IsObject() {
				rows = append(rows, json.RawMessage(bytes.Clone(cur)))
			} else {
				lost++
			}
		case in:
			cur = append(cur, line...)
		}
	}
	if in {
		lost++
	}
	return rows, lost
}

// WriteManifestRow stores row in manifest.json with the seed's append
// semantics: under an exclusive file lock, read the disk, replace the row
// with the same run (keep every other), write the file atomically (fsync'd
// file and folder, 0600). Safe for several flower processes in one run dir.
//
// A manifest that does not parse never stops a step: it is moved aside to
// manifest.json.corrupt-<time>, one warning goes to stderr, and a fresh
// manifest starts with the rows that still parse (SalvageRows) and row.
func WriteManifestRow(path string, row ManifestRow) error {
	return writeRow(path, row, nil)
}

func writeRow(path string, row ManifestRow, red *redact.Redactor) error {
	enc, err := encodeRow(row)
	if err != nil {
		return fmt.Errorf("harness: manifest: %w", err)
	}
	return updateManifest(path, red, func(rows []json.RawMessage) ([]json.RawMessage, bool) {
		for i := range rows {
			if gjson.GetBytes(rows[i], "run").String() == row.Run {
				rows[i] = enc
				return rows, true
			}
		}
		return append(rows, enc), true
	})
}

// encodeRow is row as an element of the manifest's array, indented the way
// json.MarshalIndent(rows, "", "  ") indents it.
func encodeRow(row ManifestRow) (json.RawMessage, error) {
	return json.MarshalIndent(row, "  ", "  ")
}

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

// updateManifest applies change to the rows on disk under the manifest
// lock and, when change reports a change, writes the result, redacted by
// red. The rows stay undecoded (a run dir's manifest keeps every run, and a
// step changes one row): change gets each element of the array as it stands
// in the file and returns them to be written back in the same layout.
func updateManifest(path string, red *redact.Redactor, change func([]json.RawMessage) ([]json.RawMessage, bool)) error {
	if err := privateDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("harness: manifest: %w", err)
	}
	lk, err := lockManifest(path)
	if err != nil {
		return err
	}
	defer lk.Unlock()
	rows, err := readRawManifest(path)
	if errors.Is(err, ErrManifestDamaged) {
		aside := path + ".corrupt-" + time.Now().UTC().Format("20060102T150405.000000000Z")
		if rerr := os.Rename(path, aside); rerr != nil {
			return fmt.Errorf("harness: manifest: moving the damaged one aside: %w", rerr)
		}
		data, _ := os.ReadFile(aside)
		var lost int
		rows, lost = SalvageRows(data)
		fmt.Fprintf(os.Stderr, "flower: warning: %s did not parse (%v); moved it to %s and started a fresh one with the %d rows that still parse (%d lost)\n",
			path, errors.Unwrap(err), filepath.Base(aside), len(rows), lost)
		err = nil
	}
	if err != nil {
		return err
	}
	rows, changed := change(rows)
	if !changed {
		return nil
	}
	var buf bytes.Buffer
	buf.WriteString("[")
	for i, r := range rows {
		if i > 0 {
			buf.WriteString(",")
		}
		buf.WriteString("\n  ")
		buf.Write(r)
	}
	buf.WriteString("\n]\n")
	if err := atomicfile.Write(path, red.Bytes(buf.Bytes()), 0o600); err != nil {
		return fmt.Errorf("harness: manifest: %w", err)
	}
	return nil
}

// lockManifest takes the exclusive lock of the manifest at path (its
// .lock file, private).
func lockManifest(path string) (*flock.Flock, error) {
	lk := flock.New(path + ".lock")
	if err := lk.Lock(); err != nil {
		return nil, fmt.Errorf("harness: manifest lock: %w", err)
	}
	os.Chmod(path+".lock", 0o600) // flock creates it 0644; narrowing only
	return lk, nil
}

// readRawManifest splits manifest.json into its rows without decoding
// them; anything but a JSON array of objects is ErrManifestDamaged.
func readRawManifest(path string) ([]json.RawMessage, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(data) == 0) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("harness: manifest: %w", err)
	}
	doc := gjson.ParseBytes(data)
	if !gjson.ValidBytes(data) || !doc.IsArray() && doc.Type != gjson.Null {
		return nil, fmt.Errorf("harness: manifest %s: %w: not a JSON array", path, ErrManifestDamaged)
	}
	var rows []json.RawMessage
	for _, r := range doc.Array() {
		if !r.IsObject() {
			return nil, fmt.Errorf("harness: manifest %s: %w: an element is not an object", path, ErrManifestDamaged)
		}
		rows = append(rows, json.RawMessage(r.Raw))
	}
	return rows, nil
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
// (two fsyncs) runs while claude boots: a step asks for it once its first
// claude is spawned, so that neither competes with the spawn (and endStep
// asks for it when no claude started). The returned channel is closed once
// it is done, and stepEnds must wait for it. A failure to write is left to
// stepEnds to report.
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
		r.writeRowLocked(row)
	}()
	return done
}

// stepEnds adds res to this run's row (and takes its step off Running).
func (r *Runtime) stepEnds(res StepResult) error {
	r.manifestMu.Lock()
	defer r.manifestMu.Unlock()
	r.recordEndLocked(res)
	r.mu.Lock()
	row := r.rowLocked()
	r.mu.Unlock()
	return r.writeRowLocked(row)
}

// recordEndLocked adds res to this run's results and takes its step off
// Running; r.manifestMu is held.
func (r *Runtime) recordEndLocked(res StepResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.results = append(r.results, res)
	r.running = withoutStep(r.running, res.Step)
}

// endsEarly writes the row as it will be once res is this step's result,
// without recording res yet (endStep does, and writes again unless the row
// it would write is this one); it returns the write's number.
func (r *Runtime) endsEarly(res StepResult) (int, error) {
	r.manifestMu.Lock()
	defer r.manifestMu.Unlock()
	r.mu.Lock()
	row := r.rowLocked()
	row.Results = append(row.Results, res)
	row.Running = withoutStep(row.Running, res.Step)
	r.mu.Unlock()
	err := r.writeRowLocked(row)
	return r.manifestSeq, err
}

// endsAsWritten records res as endsEarly wrote it when no manifest write of
// this Runtime came in between (write number seq); it reports whether it
// did.
func (r *Runtime) endsAsWritten(res StepResult, seq int) bool {
	r.manifestMu.Lock()
	defer r.manifestMu.Unlock()
	if r.manifestSeq != seq {
		return false
	}
	r.recordEndLocked(res)
	return true
}

// withoutStep is running without the entry of step (a new slice).
func withoutStep(running []RunningStep, step string) []RunningStep {
	for i, s := range running {
		if s.Step == step {
			return append(running[:i:i], running[i+1:]...)
		}
	}
	return running
}

// rowLocked is this run's manifest row; r.mu is held.
func (r *Runtime) rowLocked() ManifestRow {
	return ManifestRow{Run: r.run, Workspace: r.workspace, StartedAt: r.started, UpdatedAt: unixNow(),
		Results: append([]StepResult(nil), r.results...), Running: append([]RunningStep(nil), r.running...)}
}

// writeRowLocked writes this run's row and counts the write; r.manifestMu
// is held.
func (r *Runtime) writeRowLocked(row ManifestRow) error {
	r.manifestSeq++
	row, err := r.textsByReference(row)
	if err != nil {
		return err
	}
	return writeRow(r.ManifestPath(), row, r.red)
}
