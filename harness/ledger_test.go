package harness

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeEvents writes n events through an eventLog at path.
func writeEvents(t *testing.T, path string, n int) {
	t.Helper()
	l, err := openEventLog(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		l.write(Event{Kind: "step", Data: map[string]any{"i": i}, Time: time.Unix(int64(i), 0)})
	}
	l.close()
}

// TestVerifyEvents: flower's own chain verifies (also across a reopen);
// a changed, inserted, removed, appended or cut line is "altered after
// entry N" at the right N; a file from before the chain is not verified.
func TestVerifyEvents(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	for _, tc := range []struct {
		name   string
		tamper func(lines []string) []string
		want   int // -1: verifies
	}{
		{"untouched", func(l []string) []string { return l }, -1},
		{"changed", func(l []string) []string { l[2] = strings.Replace(l[2], `"i":2`, `"i":9`, 1); return l }, 3},
		{"inserted", func(l []string) []string { return append(l[:2:2], append([]string{`{"kind":"goal"}`}, l[2:]...)...) }, 2},
		{"removed", func(l []string) []string { return append(l[:1:1], l[2:]...) }, 1},
		{"appended", func(l []string) []string { return append(l, `{"kind":"goal","data":{"verdict":"achieved"}}`) }, 5},
		{"appended chained", func(l []string) []string { return append(l, `{"prev":"`+hashHex([]byte(l[4]))+`","kind":"goal"}`) }, 5},
		{"cut", func(l []string) []string { return l[:3] }, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "run", "events.jsonl")
			writeEvents(t, path, 3)
			writeEvents(t, path, 2) // a second process appends to the same chain
			data, _ := os.ReadFile(path)
			lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
			if err := os.WriteFile(path, []byte(strings.Join(tc.tamper(lines), "\n")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			ok, err := VerifyEvents(path)
			if tc.want < 0 {
				if err != nil || ok != 5 {
					t.Fatalf("flower's own record: ok %d, %v", ok, err)
				}
				return
			}
			if !errors.Is(err, ErrAltered) || ok != tc.want || !strings.Contains(err.Error(), "altered after entry") {
				t.Fatalf("ok %d, err %v; want altered after entry %d", ok, err, tc.want)
			}
		})
	}
	t.Run("head elsewhere", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "events.jsonl")
		writeEvents(t, path, 3)
		os.Remove(ledgerPath(path, "events"))
		if ok, err := VerifyEvents(path); err != nil || ok != 3 {
			t.Fatalf("the chain alone: ok %d, %v", ok, err)
		}
		data, _ := os.ReadFile(path)
		os.WriteFile(path, []byte(strings.Replace(string(data), `"i":1`, `"i":7`, 1)), 0o600)
		if ok, err := VerifyEvents(path); !errors.Is(err, ErrAltered) || ok != 2 {
			t.Fatalf("a changed line without a head: ok %d, %v", ok, err)
		}
	})
	t.Run("before the chain", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "events.jsonl")
		os.WriteFile(path, []byte(`{"kind":"a"}`+"\n"+`{"kind":"b"}`+"\n"), 0o600)
		if ok, err := VerifyEvents(path); err != nil || ok != 2 {
			t.Fatalf("ok %d, %v", ok, err)
		}
	})
}

// TestVerifyManifest: rows flower wrote verify; a row rewritten by hand is
// flagged with its entry, and stays flagged when flower writes another
// run's row; flower rewriting that run's row seals it anew.
func TestVerifyManifest(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	path := filepath.Join(t.TempDir(), "manifest.json")
	for _, run := range []string{"a", "b"} {
		if err := WriteManifestRow(path, ManifestRow{Run: run, Results: []StepResult{{Step: "s", Text: "not yet"}}}); err != nil {
			t.Fatal(err)
		}
	}
	if runs, err := VerifyManifest(path); err != nil || len(runs) != 0 {
		t.Fatalf("control: flower's rows flagged: %v %v", runs, err)
	}
	data, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(data), `"run": "b",`+"\n    \"workspace\": \"\"", `"run": "b",`+"\n    \"workspace\": \"forged\"", 1)), 0o600)
	if runs, err := VerifyManifest(path); !errors.Is(err, ErrAltered) || len(runs) != 1 || runs[0] != "b" || !strings.Contains(err.Error(), "after entry 1") {
		t.Fatalf("forged row b: %v %v", runs, err)
	}
	if err := WriteManifestRow(path, ManifestRow{Run: "a", UpdatedAt: 2}); err != nil {
		t.Fatal(err)
	}
	if got := RecordCheck(filepath.Dir(path), "b"); !strings.Contains(got, "altered after entry 1") {
		t.Fatalf("b no longer flagged after another run's write: %q", got)
	}
	if err := WriteManifestRow(path, ManifestRow{Run: "b", UpdatedAt: 3}); err != nil {
		t.Fatal(err)
	}
	if runs, err := VerifyManifest(path); err != nil {
		t.Fatalf("flower's own rewrite of b still flagged: %v %v", runs, err)
	}
}
