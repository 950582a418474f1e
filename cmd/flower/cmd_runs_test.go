package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/sessionstore"
	"github.com/flowerhq/flower/testkit/testbed"
)

// deadPID is a pid no process has (the kernel's pid_max is far below).
const deadPID = 1 << 30

// sweptRunDir is a run dir for in-process `flower runs`, removed at the
// end once the background sweep RecoverRunDir starts is done with it.
func sweptRunDir(t *testing.T) string {
	root, err := os.MkdirTemp("", "flower-runs-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		testbed.Eventually(10*time.Second, func() bool { return os.RemoveAll(root) == nil })
	})
	return filepath.Join(root, "runs")
}

// runsIn runs `flower runs ARGS --run-dir runDir` in-process.
func runsIn(t *testing.T, runDir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	full := append([]string{"flower", "runs"}, args...)
	full = append(full, "-C", filepath.Dir(runDir), "--run-dir", runDir)
	code = Main(context.Background(), full, nil, &out, &errb)
	return out.String(), errb.String(), code
}

// TestRuns_ReadAroundADamagedManifest: garbage inside one row of
// manifest.json leaves `flower runs` and `runs show` working on the rows
// that parse (exit 0, one warning naming the loss), a run the manifest
// lost whose events.jsonl is there is still listed, and nothing is moved.
// Control: the intact manifest lists both runs and warns of nothing.
func TestRuns_ReadAroundADamagedManifest(t *testing.T) {
	for _, damage := range []bool{false, true} {
		t.Run(map[bool]string{true: "damaged", false: "control"}[damage], func(t *testing.T) {
			runDir := sweptRunDir(t)
			path := filepath.Join(runDir, "manifest.json")
			for _, run := range []string{"run-good", "run-bad"} {
				row := harness.ManifestRow{Run: run, Workspace: "/ws", StartedAt: 1, UpdatedAt: 2,
					Results: []harness.StepResult{{Step: "s", OK: true, Attempts: 1}}}
				if err := harness.WriteManifestRow(path, row); err != nil {
					t.Fatal(err)
				}
			}
			// The lost row's run has its events; a folder without events
			// (the control) is no run.
			os.MkdirAll(filepath.Join(runDir, "20261202-010231-a5950b"), 0o700)
			os.WriteFile(filepath.Join(runDir, "20261202-010231-a5950b", "events.jsonl"), []byte("{}\n"), 0o600)
			os.MkdirAll(filepath.Join(runDir, "not-a-run"), 0o700)
			if damage {
				data, _ := os.ReadFile(path)
				i := bytes.LastIndex(data, []byte(`"run-bad"`))
				data = append(data[:i:i], append([]byte("\x00\xff garbage {{{"), data[i:]...)...)
				os.WriteFile(path, data, 0o600)
			}
			out, errs, code := runsIn(t, runDir, "--json")
			if code != 0 || gjson.Get(out, "#").Int() != map[bool]int64{true: 2, false: 2}[damage] || !strings.Contains(out, `"run-good"`) {
				t.Fatalf("runs --json (exit %d): %s\n%s", code, out, errs)
			}
			if damage != strings.Contains(out, "20261202-010231-a5950b") || strings.Contains(out, "not-a-run") {
				t.Errorf("the run with events only (damage %v): %s", damage, out)
			}
			if damage != strings.Contains(errs, "1 lost") {
				t.Errorf("warning (damage %v): %q", damage, errs)
			}
			if out, errs, code := runsIn(t, runDir, "show", "run-good"); code != 0 || !strings.Contains(out, "run-good") {
				t.Errorf("runs show (exit %d): %s\n%s", code, out, errs)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("the manifest was moved by a reader: %v", err)
			}
		})
	}
}

// TestRuns_MarksKilledSteps: a step left running by a flower that is gone
// shows in the next `flower runs` as failed (killed mid-step), with no
// other step run first. Control: a step running under a live pid (this
// test's) stays running.
func TestRuns_MarksKilledSteps(t *testing.T) {
	for _, dead := range []bool{true, false} {
		t.Run(map[bool]string{true: "dead flower", false: "control"}[dead], func(t *testing.T) {
			runDir := sweptRunDir(t)
			pid := os.Getpid()
			if dead {
				pid = deadPID
			}
			row := harness.ManifestRow{Run: "run-k", Workspace: "/ws", StartedAt: 1, UpdatedAt: 2, Results: []harness.StepResult{},
				Running: []harness.RunningStep{{Step: "work", PID: pid, StartedAt: 1}}}
			if err := harness.WriteManifestRow(filepath.Join(runDir, "manifest.json"), row); err != nil {
				t.Fatal(err)
			}
			out, errs, code := runsIn(t, runDir, "--json")
			if code != 0 {
				t.Fatalf("runs (exit %d): %s", code, errs)
			}
			failed := gjson.Get(out, "0.failed").Int()
			if dead && failed != 1 || !dead && failed != 0 {
				t.Fatalf("dead=%v: runs --json = %s", dead, out)
			}
			show, _, _ := runsIn(t, runDir, "show", "run-k")
			if dead != strings.Contains(show, "killed mid-step") {
				t.Errorf("dead=%v: runs show:\n%s", dead, show)
			}
		})
	}
}

// TestSessionsCheck: `flower sessions check` passes a sound store (exit 0,
// "ok") and fails a store whose b-tree pages (all but the first) start with garbage (exit 1, naming the
// damage and what the next step does), leaving the file where it is.
func TestSessionsCheck(t *testing.T) {
	for _, damaged := range []bool{false, true} {
		t.Run(map[bool]string{true: "damaged", false: "control"}[damaged], func(t *testing.T) {
			runDir := filepath.Join(t.TempDir(), "runs")
			os.MkdirAll(runDir, 0o700)
			db := filepath.Join(runDir, "sessions.db")
			st, err := sessionstore.Open(db)
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
			if damaged {
				data, _ := os.ReadFile(db)
				if len(data) < 8192 {
					t.Fatalf("store too small to damage: %d bytes", len(data))
				}
				for page := 4096; page < len(data); page += 4096 {
					copy(data[page:], strings.Repeat("\xde\xad\xbe\xef", 16))
				}
				os.WriteFile(db, data, 0o600)
			}
			var out, errb bytes.Buffer
			code := Main(context.Background(), []string{"flower", "sessions", "check", "-C", filepath.Dir(runDir), "--run-dir", runDir}, nil, &out, &errb)
			if damaged && (code != 1 || !strings.Contains(errb.String(), "damaged") || !strings.Contains(errb.String(), "moves it aside")) ||
				!damaged && (code != 0 || !strings.HasPrefix(out.String(), "ok")) {
				t.Fatalf("damaged=%v: exit %d\nstdout %s\nstderr %s", damaged, code, out.String(), errb.String())
			}
			if _, err := os.Stat(db); err != nil {
				t.Errorf("the check moved the store: %v", err)
			}
		})
	}
}
