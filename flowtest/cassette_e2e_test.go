package flowtest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	flower "github.com/flowerhq/flower"
	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/flowtest"
	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// markerScript is the "real model" of the recording: one Bash call that
// touches a marker in the workspace, then a final text.
const markerScript = `{"conversations":[{"name":"main","match":{"first_user":"mark the workspace"},"replies":[
  {"tool_use":{"name":"Bash","input":{"command":"touch flowtest-marker","description":"mark"}}},
  {"text":"FLOWTEST-DONE"}]}]}`

// runWorkflow is a library user's workflow test body: one step on a
// Runtime whose claude talks to m.
func runWorkflow(t testing.TB, m *flowtest.Model, ws, prompt string) string {
	t.Helper()
	os.MkdirAll(ws, 0o700)
	o := harness.NewOptions(ws)
	flower.Defaults(&o)
	o.RunDir = filepath.Join(t.TempDir(), "runs")
	o.Env = m.Env
	o.Claude = testbed.ClaudePath(t)
	o.HookPath = testbed.BuildBinary(t, "./cmd/flower-hook")
	o.CLIRetries = 0
	rt, err := harness.New(t.Context(), o)
	if err != nil {
		t.Fatalf("harness.New: %v", err)
	}
	defer rt.Close()
	spec := harness.NewAgentSpec("marker", "")
	spec.AllowedTools = []string{"Bash"}
	c, err := flow.NewWorkflow([]flow.Step{flow.NewStep("mark", spec, flow.Text(prompt))}).Run(t.Context(), rt, nil, nil)
	if err != nil {
		t.Fatalf("workflow: %v", err)
	}
	return c.String("mark")
}

// fakeT records what Cassette reports instead of failing the real test, and
// runs its cleanups on demand.
type fakeT struct {
	testing.TB
	fatal, errs []string
	cleanups    []func()
}

func (f *fakeT) Helper()                        {}
func (f *fakeT) Fatalf(format string, a ...any) { f.fatal = append(f.fatal, fmt.Sprintf(format, a...)) }
func (f *fakeT) Errorf(format string, a ...any) { f.errs = append(f.errs, fmt.Sprintf(format, a...)) }
func (f *fakeT) Cleanup(fn func())              { f.cleanups = append(f.cleanups, fn) }
func (f *fakeT) Logf(format string, a ...any)   {}
func (f *fakeT) Failed() bool                   { return len(f.fatal)+len(f.errs) > 0 }
func (f *fakeT) runCleanups() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

// TestE2E_CassetteRecordsThenReplays: with FLOWER_RECORD=1 and a key, a
// workflow test records through the proxy (here to the scripted model); then,
// with no upstream at all, the same test replays the cassette in another
// workspace — same answer, same marker, same number of requests, no key in
// the file. A changed prompt on replay fails the test naming the difference;
// with no cassette and no FLOWER_RECORD the test fails with the command
// that records it.
func TestE2E_CassetteRecordsThenReplays(t *testing.T) {
	testbed.ClaudePath(t)
	const key = "sk-ant-flowtest-key-5e1f0a9c"
	dir := t.TempDir()
	tape := filepath.Join(dir, "testdata", "marker.cassette")
	s, _ := scripted.Parse([]byte(markerScript))
	up, err := scripted.Start(s, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}

	var recorded int
	t.Run("record", func(t *testing.T) {
		t.Setenv(flowtest.RecordEnv, "1")
		t.Setenv(flowtest.UpstreamEnv, up.URL())
		t.Setenv("ANTHROPIC_API_KEY", key)
		m := flowtest.Cassette(t, tape)
		if !m.Recording {
			t.Fatal("FLOWER_RECORD=1 did not record")
		}
		ws := filepath.Join(dir, "ws-record")
		if got := runWorkflow(t, m, ws, "mark the workspace"); got != "FLOWTEST-DONE" {
			t.Fatalf("recorded run answered %q", got)
		}
		if _, err := os.Stat(filepath.Join(ws, "flowtest-marker")); err != nil {
			t.Fatal("the recorded run left no marker")
		}
		recorded = m.Requests()
	})
	up.Close()
	data, err := os.ReadFile(tape)
	if err != nil || recorded < 2 || strings.Count(string(data), "\n") != recorded {
		t.Fatalf("cassette after recording: %v, %d requests, %d lines", err, recorded, strings.Count(string(data), "\n"))
	}
	if strings.Contains(string(data), key) {
		t.Fatal("the cassette contains the key")
	}

	t.Run("replay", func(t *testing.T) {
		t.Setenv(flowtest.RecordEnv, "")
		m := flowtest.Cassette(t, tape)
		ws := filepath.Join(dir, "ws-replay")
		if got := runWorkflow(t, m, ws, "mark the workspace"); got != "FLOWTEST-DONE" || m.Requests() != recorded {
			t.Fatalf("replay answered %q over %d requests (recorded %d)", got, m.Requests(), recorded)
		}
		if _, err := os.Stat(filepath.Join(ws, "flowtest-marker")); err != nil {
			t.Fatal("the replayed tool call left no marker in the replay's workspace")
		}
	})

	t.Run("changed prompt fails the test", func(t *testing.T) {
		t.Setenv(flowtest.RecordEnv, "")
		f := &fakeT{TB: t}
		m := flowtest.Cassette(f, tape)
		runWorkflow(t, m, filepath.Join(dir, "ws-changed"), "mark the WORKSPACE")
		f.runCleanups()
		if len(f.errs) != 1 || !strings.Contains(f.errs[0], "first difference at messages[") || !strings.Contains(f.errs[0], "WORKSPACE") {
			t.Fatalf("errors reported: %q", f.errs)
		}
	})

	t.Run("no cassette names the recording command", func(t *testing.T) {
		t.Setenv(flowtest.RecordEnv, "")
		f := &fakeT{TB: t}
		flowtest.Cassette(f, filepath.Join(dir, "missing.cassette"))
		if len(f.fatal) != 1 || !strings.Contains(f.fatal[0], "FLOWER_RECORD=1 ANTHROPIC_API_KEY=") {
			t.Fatalf("fatal: %q", f.fatal)
		}
		t.Setenv(flowtest.RecordEnv, "1")
		for _, k := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"} {
			t.Setenv(k, "")
		}
		f = &fakeT{TB: t}
		flowtest.Cassette(f, filepath.Join(dir, "missing.cassette"))
		if len(f.fatal) != 1 || !strings.Contains(f.fatal[0], "needs a key") {
			t.Fatalf("fatal without a key: %q", f.fatal)
		}
	})
}
