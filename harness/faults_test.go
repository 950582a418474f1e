package harness

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// recordedFaults are the faults scripts/record-faults.sh recorded from the
// real claude (testdata/faults/<name>.jsonl + .exit), with the class each
// must get. Transient ones retry (and e2e: resume the same session); auth,
// bad requests and limits do not; a full context hands off.
var recordedFaults = map[string]struct {
	kind  string
	retry bool
}{
	"http-400":                 {KindBadReq, false},
	"http-401":                 {KindAuth, false},
	"http-403":                 {KindAuth, false},
	"http-404":                 {KindBadReq, false},
	"http-413":                 {KindBadReq, false},
	"http-429":                 {KindRetry, true},
	"http-429-retry-after":     {KindRetry, true},
	"http-500":                 {KindRetry, true},
	"http-502":                 {KindRetry, true},
	"http-503":                 {KindRetry, true},
	"http-504":                 {KindRetry, true},
	"http-529":                 {KindRetry, true},
	"refused":                  {KindRetry, true},
	"reset-before-headers":     {KindRetry, true},
	"drop-after-message-start": {KindRetry, true},
	"drop-mid-text":            {KindRetry, true},
	"drop-mid-tool-use":        {KindRetry, true},
	"stall":                    {KindRetry, true},
	"prompt-too-long":          {KindOverflow, false},
	"max-turns":                {KindLimit, false},
	"max-budget":               {KindLimit, false},
}

// recordedFault is one recording: claude's result line and exit code.
type recordedFault struct {
	result gjson.Result
	exit   int
}

func readRecordedFault(t *testing.T, name string) recordedFault {
	t.Helper()
	dir := filepath.Join("..", "testdata", "faults")
	data, err := os.ReadFile(filepath.Join(dir, name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var rf recordedFault
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if gjson.Get(l, "type").String() == "result" {
			rf.result = gjson.Parse(l)
		}
	}
	if !rf.result.Exists() {
		t.Fatalf("%s: no result line", name)
	}
	code, err := os.ReadFile(filepath.Join(dir, name+".exit"))
	if err != nil {
		t.Fatal(err)
	}
	if rf.exit, err = strconv.Atoi(strings.TrimSpace(string(code))); err != nil {
		t.Fatalf("%s.exit: %v", name, err)
	}
	return rf
}

// TestClassifyRecordedFaults drives Classify from what the real claude
// printed for each fault; every recording has a row and every row a
// recording.
func TestClassifyRecordedFaults(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "faults", "*.jsonl"))
	seen := map[string]bool{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		seen[name] = true
		want, ok := recordedFaults[name]
		if !ok {
			t.Errorf("%s is recorded but has no row in recordedFaults", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			rf := readRecordedFault(t, name)
			if !rf.result.Get("is_error").Bool() || rf.exit == 0 {
				t.Fatalf("the recording is no failure: is_error %v, exit %d", rf.result.Get("is_error").Bool(), rf.exit)
			}
			err := resultFailure(rf.result)
			if err == nil {
				t.Fatal("resultFailure found no failure")
			}
			f := FailureOf(err)
			f.ExitCode = rf.exit
			kind, retry := Classify(f)
			if kind != want.kind || retry != want.retry {
				t.Errorf("Classify = %s,%v; want %s,%v (status %d, subtype %q, terminal_reason %q, text %q)",
					kind, retry, want.kind, want.retry, f.Status, f.Subtype, f.TerminalReason, f.Text)
			}
		})
	}
	for name := range recordedFaults {
		if !seen[name] {
			t.Errorf("%s has a row but no recording: run scripts/record-faults.sh %s", name, name)
		}
	}
}

// TransientRecordedFaults names the recorded faults Classify retries, for
// the end-to-end tests in package harness_test.
func TransientRecordedFaults() []string {
	var out []string
	for name, c := range recordedFaults {
		if c.retry {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
