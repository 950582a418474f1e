package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
)

// askedRun is a workspace with one recorded run (manifest row, events) for
// `flower ask`; it returns the workspace and the run dir.
func askedRun(t *testing.T) (ws, runDir string) {
	t.Helper()
	ws = t.TempDir()
	runDir = filepath.Join(ws, ".flower", "runs")
	row := harness.ManifestRow{Run: "run-1", Workspace: ws, StartedAt: 1, UpdatedAt: 2, Results: []harness.StepResult{{Step: "执行", OK: true, Attempts: 1}}}
	if err := harness.WriteManifestRow(filepath.Join(runDir, "manifest.json"), row); err != nil {
		t.Fatal(err)
	}
	ev, _ := json.Marshal(harness.Event{Kind: harness.EventStepStart, Step: "执行", Data: map[string]any{"resume": "", "fork": false}})
	if err := os.MkdirAll(filepath.Join(runDir, "run-1"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runDir, "run-1", "events.jsonl"), append(ev, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	return ws, runDir
}

// TestAsk_TheOracleReadsTheNewestRun: `flower ask` runs the oracle's spec
// on a runtime of its own, in a temporary run dir with no store, with a
// prompt naming the question and the newest run's events; it prints the
// answer, and the run it asked about is left as it was. Control: a failed
// oracle exits 1 naming its error.
func TestAsk_TheOracleReadsTheNewestRun(t *testing.T) {
	for _, tc := range []struct {
		name   string
		res    harness.StepResult
		code   int
		stdout string
		stderr string
	}{
		{"answered", harness.StepResult{OK: true, Text: "  round 2 is running \n"}, exitOK, "round 2 is running\n", ""},
		{"control: the oracle failed", harness.StepResult{Error: "no result"}, exitFailed, "", "flower: the oracle failed: no result\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, runDir := askedRun(t)
			before := treeHash(t, runDir)
			e, out, errb := testEnv("")
			rts := fakeFactory(t, e, func(string, harness.AgentSpec, string) harness.StepResult { return tc.res })
			code := run(context.Background(), e, []string{"flower", "ask", "-C", ws, "--model", "m1", "where", "are we?"})
			if code != tc.code || out.String() != tc.stdout || errb.String() != tc.stderr {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d %q %q", code, out, errb, tc.code, tc.stdout, tc.stderr)
			}
			if len(*rts) != 1 || len((*rts)[0].calls) != 1 {
				t.Fatalf("%d runtimes", len(*rts))
			}
			rt, call := (*rts)[0], (*rts)[0].calls[0]
			if want := flow.Oracle("", flow.RoleOptions{Model: "m1"}); !reflect.DeepEqual(call.Spec, want) {
				t.Errorf("spec %+v, want the oracle's %+v", call.Spec, want)
			}
			events := filepath.Join(runDir, "run-1", "events.jsonl")
			if !strings.Contains(call.Prompt, "where are we?") || !strings.Contains(call.Prompt, events) {
				t.Errorf("prompt %q lacks the question or %s", call.Prompt, events)
			}
			if !rt.opts.NoStore || rt.opts.RunDir == runDir || strings.HasPrefix(rt.opts.RunDir, ws) || rt.opts.Workspace != ws {
				t.Errorf("the oracle's runtime: run dir %s, no store %v, workspace %s", rt.opts.RunDir, rt.opts.NoStore, rt.opts.Workspace)
			}
			if _, err := os.Stat(rt.opts.RunDir); !os.IsNotExist(err) {
				t.Errorf("the temporary run dir %s outlived ask (%v)", rt.opts.RunDir, err)
			}
			if treeHash(t, runDir) != before {
				t.Errorf("ask wrote into the run dir it read")
			}
		})
	}
}

// TestAsk_NothingToAskAbout: without a question, or without a run, ask
// says so and builds no runtime. Control: TestAsk_TheOracleReadsTheNewestRun.
func TestAsk_NothingToAskAbout(t *testing.T) {
	ws, _ := askedRun(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-C", ws}, exitUsage, "ask needs a question"},
		{[]string{"-C", t.TempDir(), "where?"}, exitFailed, "no runs in "},
	} {
		e, _, errb := testEnv("")
		rts := fakeFactory(t, e, nil)
		if code := run(context.Background(), e, append([]string{"flower", "ask"}, tc.args...)); code != tc.code || !strings.Contains(errb.String(), tc.want) || len(*rts) != 0 {
			t.Errorf("%v: exit %d, stderr %q, %d runtimes", tc.args, code, errb, len(*rts))
		}
	}
}

// treeHash hashes every file (path and bytes) under dir.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		h.Write([]byte(p + "\x00"))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))
}
