package harness

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// The run record shows tampering (issue 31 item 6). Each events.jsonl
// line carries "prev", the SHA-256 of the line before it (the first ""),
// so a line changed, removed or put in between breaks the chain at that
// entry. The chain's head (how many lines, the hash of the last) and the
// seal of each manifest row (the SHA-256 of the row as written) are kept
// outside the workspace and the run dir, in flower's private state folder
// (ledgerDir): a worker's Bash that rewrites the record in the workspace
// does not move them, so an appended or truncated tail, or a row written
// by anything but flower, no longer matches. VerifyEvents and
// VerifyManifest say where the record stops being flower's.

// ErrAltered is wrapped by the errors of VerifyEvents and VerifyManifest.
var ErrAltered = errors.New("altered")

// ledgerDir is flower's private folder of chain heads and row seals:
// $XDG_STATE_HOME/flower/ledger, else ~/.local/state/flower/ledger.
func ledgerDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "flower", "ledger")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "flower-ledger-"+strconv.Itoa(os.Getuid()))
	}
	return filepath.Join(home, ".local", "state", "flower", "ledger")
}

// ledgerPath is the head or seal file of the record at path (kind
// "events" or "manifest"), named by the hash of path's absolute form.
func ledgerPath(path, kind string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	if r, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(r, filepath.Base(abs))
	}
	return filepath.Join(ledgerDir(), hashHex([]byte(abs))[:32]+"."+kind)
}

func hashHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// writeLedger stores data (private folder and file).
func writeLedger(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// chainHead is the count and last hash of an events chain.
type chainHead struct {
	n    int
	last string
}

func readHead(path string) (chainHead, bool) {
	data, err := os.ReadFile(ledgerPath(path, "events"))
	if err != nil {
		return chainHead{}, false
	}
	f := strings.Fields(string(data))
	if len(f) != 2 {
		return chainHead{n: -1}, true
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return chainHead{n: -1}, true
	}
	return chainHead{n: n, last: f[1]}, true
}

func (h chainHead) save(path string) error {
	return writeLedger(ledgerPath(path, "events"), []byte(fmt.Sprintf("%d %s\n", h.n, h.last)))
}

// eventLines reads the lines of an events file (a torn last line too).
func eventLines(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	var lines [][]byte
	for sc.Scan() {
		lines = append(lines, bytes.Clone(sc.Bytes()))
	}
	return lines, sc.Err()
}

// chained returns line (a JSON object) with "prev" first.
func chained(line []byte, prev string) []byte {
	if len(line) < 2 || line[0] != '{' {
		return line
	}
	sep := ","
	if bytes.Equal(bytes.TrimSpace(line[1:]), []byte("}")) {
		sep = ""
	}
	return append([]byte(`{"prev":"`+prev+`"`+sep), line[1:]...)
}

// VerifyEvents checks the chain of the events file at path and its head.
// okUpTo is how many entries (lines, from 1) are flower's; err (wrapping
// ErrAltered) says "altered after entry N" when the file stops being
// flower's record there. A file written before the chain existed (no
// "prev" anywhere and no head) is not verified: (its line count, nil); one
// whose head is not in this machine's ledgerDir (copied from another
// machine, another HOME) is checked by its chain alone.
func VerifyEvents(path string) (okUpTo int, err error) {
	lines, err := eventLines(path)
	if err != nil {
		return 0, fmt.Errorf("harness: events: %w", err)
	}
	head, haveHead := readHead(path)
	if !haveHead && !anyPrev(lines) {
		return len(lines), nil
	}
	prev := ""
	for i, l := range lines {
		if p := gjson.GetBytes(l, "prev"); !p.Exists() || p.String() != prev {
			return i, altered(path, i)
		}
		prev = hashHex(l)
	}
	switch {
	case !haveHead:
		// Another machine or another HOME: the chain alone is checked.
		return len(lines), nil
	case head.n < 0 || head.n > len(lines):
		return len(lines), altered(path, len(lines))
	case head.n == 0 && len(lines) > 0:
		return 0, altered(path, 0)
	case head.n > 0 && hashHex(lines[head.n-1]) != head.last:
		return 0, altered(path, 0)
	case head.n < len(lines):
		return head.n, altered(path, head.n)
	}
	return len(lines), nil
}

func anyPrev(lines [][]byte) bool {
	for _, l := range lines {
		if gjson.GetBytes(l, "prev").Exists() {
			return true
		}
	}
	return false
}

func altered(path string, n int) error {
	return fmt.Errorf("%s %w after entry %d", path, ErrAltered, n)
}

// sealRows updates the manifest seals at path: rows whose bytes changed
// from before (flower wrote them) get the hash of what is written; the
// others keep theirs, so a row rewritten by anything else stays flagged.
func sealRows(path string, before, after []json.RawMessage) error {
	seals := readSeals(path)
	if seals == nil {
		// No seals yet (a manifest from before them): its rows are
		// taken as they stand.
		seals = map[string]string{}
		for _, r := range before {
			seals[gjson.GetBytes(r, "run").String()] = hashHex(r)
		}
	}
	old := map[string]string{}
	for _, r := range before {
		old[gjson.GetBytes(r, "run").String()] = string(r)
	}
	for _, r := range after {
		run := gjson.GetBytes(r, "run").String()
		if o, ok := old[run]; !ok || o != string(r) {
			seals[run] = hashHex(r)
		}
	}
	js, err := json.Marshal(seals)
	if err != nil {
		return err
	}
	return writeLedger(ledgerPath(path, "manifest"), js)
}

func readSeals(path string) map[string]string {
	data, err := os.ReadFile(ledgerPath(path, "manifest"))
	if err != nil {
		return nil
	}
	var m map[string]string
	if json.Unmarshal(data, &m) != nil {
		return map[string]string{}
	}
	return m
}

// RecordCheck is what the verification of one run's record found: ""
// when its manifest row and its events are flower's, else one line (where
// the record is "altered after entry N") to show instead of its outcome.
// Another engineer's live view can call it (or VerifyEvents) per run.
func RecordCheck(runDir, run string) string {
	manifest := filepath.Join(runDir, "manifest.json")
	if i, ok := manifestAltered(manifest)[run]; ok {
		return fmt.Sprintf("manifest.json altered after entry %d (its row of run %s is not the one flower wrote)", i, run)
	}
	events := filepath.Join(runDir, run, "events.jsonl")
	if _, err := os.Stat(events); err != nil {
		return ""
	}
	if _, err := VerifyEvents(events); err != nil {
		return strings.TrimPrefix(err.Error(), filepath.Join(runDir, run)+string(filepath.Separator))
	}
	return ""
}

// manifestAltered maps each run whose row does not match its seal to the
// row's index (the entries before it are flower's).
func manifestAltered(path string) map[string]int {
	out := map[string]int{}
	rows, err := readRawManifest(path)
	seals := readSeals(path)
	if err != nil || seals == nil {
		return out
	}
	for i, r := range rows {
		run := gjson.GetBytes(r, "run").String()
		if s, ok := seals[run]; !ok || s != hashHex(r) {
			out[run] = i
		}
	}
	return out
}

// VerifyManifest checks each row of the manifest at path against its seal
// and returns the runs whose rows flower did not write (in file order);
// err wraps ErrAltered naming the first ("altered after entry N": the
// rows before it are flower's). A manifest without seals (written before
// they existed) is not verified.
func VerifyManifest(path string) (alteredRuns []string, err error) {
	rows, err := readRawManifest(path)
	if err != nil {
		return nil, err
	}
	seals := readSeals(path)
	if seals == nil {
		return nil, nil
	}
	first := -1
	for i, r := range rows {
		run := gjson.GetBytes(r, "run").String()
		if s, ok := seals[run]; !ok || s != hashHex(r) {
			alteredRuns = append(alteredRuns, run)
			if first < 0 {
				first = i
			}
		}
	}
	if first >= 0 {
		return alteredRuns, fmt.Errorf("%s %w after entry %d (the row of run %s is not the one flower wrote)", path, ErrAltered, first, alteredRuns[0])
	}
	return nil, nil
}
