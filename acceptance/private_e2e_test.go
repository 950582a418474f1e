package acceptance

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/testkit/testbed"
)

// stepBed is a scripted bed plus a `flower step` command line in it.
type stepBed struct {
	t      *testing.T
	bed    *testbed.Bed
	flower string
	env    []string
	runDir string
}

func newStepBed(t *testing.T, replies ...scripted.Reply) *stepBed {
	t.Helper()
	return newStepBedScript(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main", Replies: replies}}})
}

func newStepBedScript(t *testing.T, sc *scripted.Script) *stepBed {
	t.Helper()
	bed := testbed.New(t, sc)
	runDir := filepath.Join(t.TempDir(), "runs")
	env := flowerbin.Env(t, bed.Env(), bed.Claude,
		"FLOWER_RUN_DIR="+runDir)
	return &stepBed{t: t, bed: bed, flower: testbed.BuildBinary(t, "./cmd/flower"), env: env, runDir: runDir}
}

func (b *stepBed) step(args ...string) (stdout, stderr string, err error) {
	cmd := testbed.Command(b.t, b.flower, append([]string{"step"}, args...)...)
	cmd.Env, cmd.Dir = b.env, b.bed.Workspace
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// TestE2E_DamagedManifest: a manifest.json truncated by a crash does not
// stop the next step: it prints its result, exits 0, warns once, and leaves
// a manifest that parses (the damaged one moved aside).
func TestE2E_DamagedManifest(t *testing.T) {
	t.Parallel()
	b := newStepBed(t, scripted.Reply{Text: "AFTER-DAMAGE-OK"})
	os.MkdirAll(b.runDir, 0o700)
	path := filepath.Join(b.runDir, "manifest.json")
	os.WriteFile(path, []byte(`[{"run":"20260101-000000-aaaaaa","workspace":"/w","results":[{"step":"plain","ok":tru`), 0o600)
	if _, err := harness.ReadManifest(path); err == nil { // the control: it is damaged
		t.Fatal("the truncated manifest parses")
	}
	out, errOut, err := b.step("do it")
	if err != nil || !strings.Contains(out, "AFTER-DAMAGE-OK") {
		t.Fatalf("step: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	if strings.Count(errOut, "did not parse") != 1 {
		t.Errorf("want one warning on stderr, got:\n%s", errOut)
	}
	rows, err := harness.ReadManifest(path)
	if err != nil || len(rows) != 1 || len(rows[0].Results) != 1 || !rows[0].Results[0].OK {
		t.Fatalf("manifest after the step: %+v, %v", rows, err)
	}
	if aside, _ := filepath.Glob(path + ".corrupt-*"); len(aside) != 1 {
		t.Errorf("moved aside: %v", aside)
	}
}

// TestE2E_RunDirPrivate: after a real step (with a workbench and a tool
// call), every file and folder under the run dir has no group or other bits,
// although this process's umask would allow them (the control).
func TestE2E_RunDirPrivate(t *testing.T) {
	t.Parallel()
	b := newStepBed(t,
		scripted.Reply{ToolUse: &scripted.Block{Name: "Bash", Input: []byte(`{"command":"echo private-run","description":"echo"}`)}},
		scripted.Reply{Text: "PRIVATE-OK"})
	probe := filepath.Join(t.TempDir(), "probe")
	os.WriteFile(probe, nil, 0o644)
	if st, _ := os.Stat(probe); st.Mode().Perm()&0o044 == 0 {
		t.Log("note: this process's umask already hides group/other read bits")
	}
	out, errOut, err := b.step("--role", "worker", "--workbench", "do it")
	if err != nil || !strings.Contains(out, "PRIVATE-OK") {
		t.Fatalf("step: %v\n%s\n%s", err, out, errOut)
	}
	n := 0
	var names []string
	filepath.WalkDir(b.runDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Error(err)
			return nil
		}
		info, _ := d.Info()
		if info.Mode()&fs.ModeSymlink != 0 {
			return nil
		}
		n++
		rel, _ := filepath.Rel(b.runDir, p)
		names = append(names, rel)
		if m := info.Mode().Perm(); m&0o077 != 0 {
			t.Errorf("%s is %o", rel, m)
		}
		return nil
	})
	for _, want := range []string{"manifest.json", "sessions.db", "claude-config"} {
		if !strings.Contains(strings.Join(names, "\n"), want) {
			t.Errorf("the walk did not see %s (it saw %d entries)", want, n)
		}
	}
}

// TestE2E_SecretNotPersisted: a tool prints the API key; the model sees it
// (the control: the secret was in the flow), yet no file under the run dir
// holds it (sessions.db bytes included), and events say [redacted].
func TestE2E_SecretNotPersisted(t *testing.T) {
	t.Parallel()
	const key = "sk-ant-e2e-SECRET-0123456789abcdef"
	b := newStepBed(t,
		scripted.Reply{ToolUse: &scripted.Block{Name: "Bash", Input: []byte(`{"command":"echo key=$ANTHROPIC_API_KEY","description":"echo"}`)}},
		scripted.Reply{Text: "SECRET-DONE"})
	b.env = append(b.env, "ANTHROPIC_API_KEY="+key)
	out, errOut, err := b.step("--role", "worker", "do it")
	if err != nil || !strings.Contains(out, "SECRET-DONE") {
		t.Fatalf("step: %v\n%s\n%s", err, out, errOut)
	}
	reqs := b.bed.Model.Requests()
	var seen []string
	for _, r := range reqs {
		for _, tr := range r.AllToolResults() {
			seen = append(seen, tr.Content)
		}
	}
	if !strings.Contains(strings.Join(seen, "\n"), "key="+key) {
		t.Fatalf("the model never saw the key in the tool result: the test proves nothing (tool results: %q)", seen)
	}
	redacted := false
	filepath.WalkDir(b.runDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		data, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(b.runDir, p)
		if bytes.Contains(data, []byte(key)) {
			t.Errorf("%s holds the key", rel)
		}
		if strings.HasSuffix(p, "events.jsonl") && bytes.Contains(data, []byte("key=[redacted]")) {
			redacted = true
		}
		return nil
	})
	if !redacted {
		t.Error("events.jsonl does not show the redacted tool output")
	}
}

// TestE2E_KilledMidStepMarked: flower killed with SIGKILL while its step
// waits for the model leaves a running step in the manifest; the next
// flower in that run dir marks it killed mid-step.
func TestE2E_KilledMidStepMarked(t *testing.T) {
	t.Parallel()
	b := newStepBedScript(t, &scripted.Script{Conversations: []scripted.Conversation{
		{Name: "doomed", Match: scripted.Match{FirstUser: "wait"}, Replies: []scripted.Reply{{Text: "too late", DelayMS: 60000}}},
		{Name: "next", Match: scripted.Match{FirstUser: "go on"}, Replies: []scripted.Reply{{Text: "SECOND-OK"}}},
	}})
	cmd := testbed.Command(t, b.flower, "step", "--name", "doomed", "wait")
	cmd.Env, cmd.Dir = b.env, b.bed.Workspace
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(b.runDir, "manifest.json")
	var rows []harness.ManifestRow
	if !testbed.Eventually(testbed.Left(t), func() bool {
		rows, _ = harness.ReadManifest(path)
		return len(rows) == 1 && len(rows[0].Running) == 1 && len(b.bed.Model.Requests()) > 0
	}) {
		t.Fatalf("the step never showed as running: %+v", rows)
	}
	cmd.Process.Kill()
	cmd.Wait()
	out, errOut, err := b.step("--name", "next", "go on")
	if err != nil || !strings.Contains(out, "SECOND-OK") {
		t.Fatalf("next step: %v\n%s\n%s", err, out, errOut)
	}
	rows, err = harness.ReadManifest(path)
	if err != nil || len(rows) != 2 {
		t.Fatalf("rows %+v, %v", rows, err)
	}
	var killed *harness.StepResult
	for _, r := range rows {
		if len(r.Running) != 0 {
			t.Errorf("row %s still lists running steps %+v", r.Run, r.Running)
		}
		for i := range r.Results {
			if r.Results[i].Step == "doomed" {
				killed = &r.Results[i]
			}
		}
	}
	if killed == nil || killed.OK || !strings.HasPrefix(killed.Error, harness.KilledMidStep) {
		t.Fatalf("the killed step's result: %+v", killed)
	}
}
