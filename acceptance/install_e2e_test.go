package acceptance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowerhq/flower/hooks"
	"github.com/flowerhq/flower/internal/envlist"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// delegationScript: asked "please make the file", main runs `touch
// main-wrote-this`, then sends the worker subagent, which runs `touch
// sub-wrote-this`; main then answers GUARDED-REPLY-OK.
const delegationScript = `{"conversations":[
  {"name":"sub","match":{"first_user":"SUBTASK: mark"},"replies":[
    {"tool_use":{"name":"Bash","input":{"command":"touch sub-wrote-this","description":"mark"}}},
    {"text":"sub done"}]},
  {"name":"main","match":{"first_user":"please make the file"},"replies":[
    {"tool_use":{"name":"Bash","input":{"command":"touch main-wrote-this","description":"make a file"}}},
    {"tool_use":{"name":"Agent","input":{"description":"mark","prompt":"SUBTASK: mark","subagent_type":"worker","run_in_background":false}}},
    {"text":"GUARDED-REPLY-OK"}]}]}`

// workerAgents defines the worker subagent of delegationScript.
const workerAgents = `{"worker":{"description":"does work","prompt":"You are WORKER","tools":["Bash"]}}`

// delegationBed is a bed running delegationScript.
func delegationBed(t *testing.T) *testbed.Bed {
	t.Helper()
	s, err := scripted.Parse([]byte(delegationScript))
	if err != nil {
		t.Fatal(err)
	}
	return testbed.New(t, s)
}

// assertDelegated checks what delegationScript leaves behind under the
// delegate guard: main's Bash was denied with the delegate advice (the
// model saw it) and nothing landed, the subagent's Bash ran.
func assertDelegated(t *testing.T, bed *testbed.Bed) {
	t.Helper()
	main := bed.Model.RequestsFor("main")
	if len(main) < 2 {
		t.Fatalf("main made %d requests, want the denied Bash's result", len(main))
	}
	trs := main[1].ToolResults()
	if len(trs) != 1 || !trs[0].IsError || !strings.Contains(trs[0].Content, hooks.DelegateReason("Bash")) {
		t.Errorf("main's Bash result = %+v, want the delegate guard's denial", trs)
	}
	if _, err := os.Stat(filepath.Join(bed.Workspace, "main-wrote-this")); err == nil {
		t.Errorf("the main thread's Bash ran")
	}
	if _, err := os.Stat(filepath.Join(bed.Workspace, "sub-wrote-this")); err != nil {
		t.Errorf("the subagent's Bash did not run: %v", err)
	}
}

// TestE2E_GoInstallIsComplete: `go install ./cmd/...` into a temp GOBIN,
// claude on PATH, a fresh HOME, run from a folder outside any checkout:
// `flower doctor` passes, and `flower claude -p` carries its own guards
// plugin (materialized into the user's cache, 0700, bin/flower-hook
// linking to the installed one): the main thread's Bash is denied, the
// subagent's runs. The control is the same claude without flower: the main
// thread's Bash runs.
func TestE2E_GoInstallIsComplete(t *testing.T) {
	t.Parallel()
	bed := delegationBed(t)
	gobin := filepath.Join(t.TempDir(), "gobin")
	install := testbed.Command(t, "go", "install", "./cmd/...")
	install.Dir = testbed.RepoRoot(t)
	install.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install: %v\n%s", err, out)
	}
	onPath := filepath.Join(t.TempDir(), "path")
	if err := os.MkdirAll(onPath, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bed.Claude, filepath.Join(onPath, "claude")); err != nil {
		t.Fatal(err)
	}
	env := append(envlist.Without(bed.Env(), func(k string) bool {
		return k == "PATH" || k == "XDG_CACHE_HOME" || strings.HasPrefix(k, "FLOWER_")
	}), "PATH="+onPath+":/usr/bin:/bin")
	flower := filepath.Join(gobin, "flower")

	doctor := testbed.Command(t, flower, "doctor")
	doctor.Env, doctor.Dir = env, bed.Workspace
	if out, err := doctor.CombinedOutput(); err != nil || !strings.Contains(string(out), "✓ plugin") {
		t.Fatalf("flower doctor: %v\n%s", err, out)
	}

	run := testbed.Command(t, flower, "claude", "-p", "--output-format", "stream-json", "--verbose",
		"--allowedTools", "Bash", "--agents", workerAgents, "--", "please make the file")
	run.Env, run.Dir = env, bed.Workspace
	out, err := run.Output()
	if _, res := testbed.ParseStream(out); err != nil || res.Get("result").String() != "GUARDED-REPLY-OK" {
		t.Fatalf("flower claude: %v, result %s", err, res.Raw)
	}
	assertDelegated(t, bed)
	plugins, _ := filepath.Glob(filepath.Join(bed.Home, ".cache", "flower", "plugin-*"))
	if len(plugins) != 1 {
		t.Fatalf("materialized plugins: %v, want one", plugins)
	}
	if st, err := os.Lstat(plugins[0]); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("plugin folder %s: %v, mode %v, want 0700", plugins[0], err, st.Mode())
	}
	if target, err := os.Readlink(filepath.Join(plugins[0], hooks.PluginHookBin)); err != nil || target != filepath.Join(gobin, "flower-hook") {
		t.Errorf("plugin's flower-hook links to %q (%v), want the installed one", target, err)
	}

	// Control: plain claude, same script, runs the main thread's Bash.
	ctl := delegationBed(t)
	ran := ctl.Print(t, "please make the file", "--allowedTools", "Bash", "--agents", workerAgents)
	if _, err := os.Stat(filepath.Join(ctl.Workspace, "main-wrote-this")); err != nil || ran.Result.Get("result").String() != "GUARDED-REPLY-OK" {
		t.Errorf("control: plain claude's main thread Bash did not run (%v): %s", err, ran.Result.Raw)
	}
}
