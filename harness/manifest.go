package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
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
// still do (salvageRows) and, as err, the damage (wrapping
// ErrManifestDamaged, with how many rows were lost). Nothing is moved.
func ReadManifestAround(path string) ([]ManifestRow, error) {
	rows, err := ReadManifest(path)
	if !errors.Is(err, ErrManifestDamaged) {
		return rows, err
	}
	data, _ := os.ReadFile(path)
	raw, lost := salvageRows(data)
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

// salvageRows cuts a damaged manifest into the rows that still parse as
// JSON objects, by the layout updateManifest writes (each row from a line
// "  {" to a line "  }" or "  },"), and counts the pieces that do not.
func salvageRows(data []byte) (rows []json.RawMessage, lost int) {
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

// WriteManifestRow stores row in manifest.json, one row per run: under an
// exclusive file lock, read the disk, replace the row with the same run
// (keep every other) or append it, write the file atomically (fsync'd file
// and folder, 0600). Safe for several flower processes in one run dir.
//
// A manifest that does not parse never stops a step: it is moved aside to
// manifest.json.corrupt-<time>, one warning goes to stderr, and a fresh
// manifest starts with the rows that still parse (salvageRows) and row.
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
		rows, lost = salvageRows(data)
		fmt.Fprintf(os.Stderr, "flower: warning: %s did not parse (%v); moved it to %s and started a fresh one with the %d rows that still parse (%d lost)\n",
			path, errors.Unwrap(err), filepath.Base(aside), len(rows), lost)
		err = nil
	}
	if err != nil {
		return err
	}
	before := slices.Clone(rows)
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
	written := red.Bytes(buf.Bytes())
	if err := atomicfile.Write(path, written, 0o600); err != nil {
		return fmt.Errorf("harness: manifest: %w", err)
	}
	after, err := readRawManifest(path)
	if err == nil {
		err = sealRows(path, before, after)
	}
	if err != nil {
		return fmt.Errorf("harness: manifest seals: %w", err)
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
