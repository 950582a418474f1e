package harness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// ReadEvents reads <run_dir>/<run>/events.jsonl. A line that does not parse
// (a torn write of a killed process) is skipped and counted in skipped.
func ReadEvents(path string) (events []Event, skipped int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("harness: events: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			skipped++
			continue
		}
		events = append(events, ev)
	}
	if err := sc.Err(); err != nil {
		return events, skipped, fmt.Errorf("harness: events %s: %w", path, err)
	}
	return events, skipped, nil
}

// NewestRun returns the manifest row of the run updated last, or ok=false
// when the run dir has none.
func NewestRun(runDir string) (row ManifestRow, ok bool, err error) {
	rows, err := ReadManifest(filepath.Join(runDir, "manifest.json"))
	if err != nil || len(rows) == 0 {
		return ManifestRow{}, false, err
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].UpdatedAt < rows[j].UpdatedAt })
	return rows[len(rows)-1], true, nil
}
