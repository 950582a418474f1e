package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/gofrs/flock"
)

// ManifestRow is one run's row of <run_dir>/manifest.json.
type ManifestRow struct {
	Run       string       `json:"run"`
	Workspace string       `json:"workspace"`
	StartedAt float64      `json:"started_at"`
	UpdatedAt float64      `json:"updated_at"`
	Results   []StepResult `json:"results"`
}

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
		return nil, fmt.Errorf("harness: manifest %s: %w", path, err)
	}
	return rows, nil
}

// WriteManifestRow stores row in manifest.json with the seed's append
// semantics: under an exclusive file lock, read the disk, replace the row
// with the same run (keep every other), write a temp file and rename it. Safe
// for several flower processes in one run dir.
func WriteManifestRow(path string, row ManifestRow) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("harness: manifest: %w", err)
	}
	lk := flock.New(path + ".lock")
	if err := lk.Lock(); err != nil {
		return fmt.Errorf("harness: manifest lock: %w", err)
	}
	defer lk.Unlock()
	rows, err := ReadManifest(path)
	if err != nil {
		return err
	}
	replaced := false
	for i := range rows {
		if rows[i].Run == row.Run {
			rows[i], replaced = row, true
		}
	}
	if !replaced {
		rows = append(rows, row)
	}
	data, err := json.MarshalIndent(rows, "", "  ")
	if err != nil {
		return fmt.Errorf("harness: manifest: %w", err)
	}
	if err := writeFileAtomic(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("harness: manifest: %w", err)
	}
	return nil
}

// eventLog appends Events as JSON lines to <run_dir>/<run>/events.jsonl.
type eventLog struct {
	mu sync.Mutex
	f  *os.File
}

func openEventLog(path string) (*eventLog, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("harness: events: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("harness: events: %w", err)
	}
	return &eventLog{f: f}, nil
}

func (l *eventLog) write(ev Event) {
	data, err := json.Marshal(ev)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		l.f.Write(append(data, '\n'))
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
