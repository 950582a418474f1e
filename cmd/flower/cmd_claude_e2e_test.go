package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/sessionstore"
	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/testkit/testbed"
)

// guardedPlugin copies plugin/ into a temp dir with a freshly built
// flower-hook in its bin/, as scripts/setup.sh lays it out.
func guardedPlugin(t *testing.T) string {
	t.Helper()
	root := testbed.RepoRoot(t)
	dir := filepath.Join(t.TempDir(), "plugin")
	cp := testbed.Command(t, "cp", "-r", filepath.Join(root, "plugin"), dir)
	if out, err := cp.CombinedOutput(); err != nil {
		t.Fatalf("copy plugin: %v %s", err, out)
	}
	hook := testbed.BuildBinary(t, "./cmd/flower-hook")
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	data, err := os.ReadFile(hook)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "flower-hook"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// interactiveHome pre-answers claude's first-run questions (onboarding,
// folder trust, the custom API key) the way a person who used claude before
// has already answered them.
func interactiveHome(t *testing.T, bed *testbed.Bed) {
	t.Helper()
	cfg := `{"hasCompletedOnboarding":true,"theme":"dark","customApiKeyResponses":{"approved":["sk-test"],"rejected":[]},` +
		`"projects":{"` + bed.Workspace + `":{"hasTrustDialogAccepted":true,"hasCompletedProjectOnboarding":true}}}`
	if err := os.WriteFile(filepath.Join(bed.Home, ".claude.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

func dropInEnv(t *testing.T, bed *testbed.Bed, runDir string) []string {
	return append(bed.Env(),
		"FLOWER_CLAUDE="+bed.Claude,
		"FLOWER_PLUGIN_DIR="+guardedPlugin(t),
		"FLOWER_RUN_DIR="+runDir,
	)
}

const guardScript = `{"conversations":[{"name":"main","match":{"first_user":"please make the file"},"replies":[
  {"tool_use":{"name":"Bash","input":{"command":"touch main-wrote-this","description":"make a file"}}},
  {"text":"GUARDED-REPLY-OK"}]}]}`

// TestE2E_ClaudeDropIn_TTY types into `flower claude` under tmux and reads
// the screen: claude works as by hand, the delegate guard denies the main
// thread's write, /exit gives exit 0, and the session lands in the store.
func TestE2E_ClaudeDropIn_TTY(t *testing.T) {
	t.Parallel()
	s, err := scripted.Parse([]byte(guardScript))
	if err != nil {
		t.Fatal(err)
	}
	bed := testbed.New(t, s)
	interactiveHome(t, bed)
	flower := testbed.BuildBinary(t, "./cmd/flower")
	runDir := filepath.Join(t.TempDir(), "runs")
	term := flowerbin.NewTerminal(t, dropInEnv(t, bed, runDir), bed.Workspace, flower+" claude")
	term.WaitFor("❯")
	term.TypeLine("please make the file")
	term.WaitFor("GUARDED-REPLY-OK")

	if _, err := os.Stat(filepath.Join(bed.Workspace, "main-wrote-this")); err == nil {
		t.Error("the main thread's Bash ran: the guard did not apply")
	}
	reqs := bed.Model.RequestsFor("main")
	if len(reqs) != 2 {
		t.Fatalf("main requests = %d", len(reqs))
	}
	tr := reqs[1].ToolResults()
	if len(tr) != 1 || !tr[0].IsError || !strings.Contains(tr[0].Content, "Agent") {
		t.Errorf("the model was not told to delegate: %+v", tr)
	}

	term.TypeLine("/exit")
	term.WaitFor("FLOWER-EXIT=0")
	// claude's own hint (claude --resume) would drop the guards; flower
	// names the way back with them.
	term.WaitFor("flower claude --resume ")

	st, err := sessionstore.Open(filepath.Join(runDir, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sessions, err := st.ListSessions(context.Background(), scripted.ProjectDirName(bed.Workspace))
	if err != nil || len(sessions) != 1 {
		t.Fatalf("mirrored sessions = %v, %v", sessions, err)
	}
}

// TestE2E_ClaudeDropIn_Pipe: off a terminal, flower claude passes output and
// exit code through unchanged.
func TestE2E_ClaudeDropIn_Pipe(t *testing.T) {
	t.Parallel()
	s, err := scripted.Parse([]byte(`{"conversations":[
	  {"name":"ok","match":{"first_user":"say ok"},"replies":[{"text":"PIPE-OK"}]},
	  {"name":"bad","match":{"first_user":"fail please"},"replies":[{"fault":{"status":400,"message":"prompt is too long: 3 > 2"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	bed := testbed.New(t, s)
	flower := testbed.BuildBinary(t, "./cmd/flower")
	env := dropInEnv(t, bed, filepath.Join(t.TempDir(), "runs"))
	for _, tc := range []struct {
		prompt, want string
		code         int
	}{{"say ok", "PIPE-OK", 0}, {"fail please", "Prompt is too long", 1}} {
		cmd := testbed.Command(t, flower, "claude", "-p", tc.prompt)
		cmd.Env, cmd.Dir = env, bed.Workspace
		out, _ := cmd.Output()
		if cmd.ProcessState.ExitCode() != tc.code || !strings.Contains(string(out), tc.want) {
			t.Errorf("%q: exit %d out %q", tc.prompt, cmd.ProcessState.ExitCode(), out)
		}
	}
}

// TestE2E_ClaudeDropIn_PrintShowsDenials: in `-p` text mode claude says
// nothing of a guard's denial (the model's text, exit 0); flower claude
// prints it on stderr, one line naming the guard, the tool and the reason,
// and stdout stays claude's. The control: a prompt whose model calls no
// tool leaves stderr without such a line.
func TestE2E_ClaudeDropIn_PrintShowsDenials(t *testing.T) {
	t.Parallel()
	s, err := scripted.Parse([]byte(`{"conversations":[
	  {"name":"main","match":{"first_user":"please make the file"},"replies":[
	    {"tool_use":{"name":"Bash","input":{"command":"touch main-wrote-this","description":"make a file"}}},
	    {"text":"GUARDED-REPLY-OK"}]},
	  {"name":"plain","match":{"first_user":"say ok"},"replies":[{"text":"PLAIN-OK"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	bed := testbed.New(t, s)
	flower := testbed.BuildBinary(t, "./cmd/flower")
	env := dropInEnv(t, bed, filepath.Join(t.TempDir(), "runs"))
	for _, tc := range []struct {
		prompt, out string
		denied      bool
	}{{"please make the file", "GUARDED-REPLY-OK", true}, {"say ok", "PLAIN-OK", false}} {
		cmd := testbed.Command(t, flower, "claude", "-p", tc.prompt)
		cmd.Env, cmd.Dir = env, bed.Workspace
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%q: %v\n%s", tc.prompt, err, stderr.String())
		}
		if strings.TrimSpace(stdout.String()) != tc.out {
			t.Errorf("%q: stdout = %q, want claude's text only", tc.prompt, stdout.String())
		}
		line := "flower: the delegate guard denied Bash: "
		if got := strings.Contains(stderr.String(), line); got != tc.denied {
			t.Errorf("%q: denial on stderr = %v, want %v:\n%s", tc.prompt, got, tc.denied, stderr.String())
		}
	}
	if _, err := os.Stat(filepath.Join(bed.Workspace, "main-wrote-this")); err == nil {
		t.Error("the main thread's Bash ran: the guard did not apply")
	}
}

// TestE2E_ClaudeDropIn_MirrorAfterSIGTERM: SIGTERM to `flower claude -p`
// while the model is still answering (what the Agent SDK's abort() sends)
// ends claude, and the session it started still lands in the store (the
// mirror no longer runs on the cancelled context).
func TestE2E_ClaudeDropIn_MirrorAfterSIGTERM(t *testing.T) {
	t.Parallel()
	asked := make(chan struct{}, 1)
	bed := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main",
		Func: func(scripted.Request) scripted.Reply {
			select {
			case asked <- struct{}{}:
			default:
			}
			return scripted.Reply{Text: "TOO-LATE", DelayMS: 60_000}
		}}}})
	flower := testbed.BuildBinary(t, "./cmd/flower")
	runDir := filepath.Join(t.TempDir(), "runs")
	cmd := testbed.Command(t, flower, "claude", "-p", "wait for the answer")
	cmd.Env, cmd.Dir = dropInEnv(t, bed, runDir), bed.Workspace
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-asked:
	case <-time.After(testbed.Left(t)):
		t.Fatal("the model was never asked")
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if strings.Contains(errb.String(), "context canceled") {
		t.Errorf("the mirror ran on the cancelled context: %s", errb.String())
	}
	st, err := sessionstore.Open(filepath.Join(runDir, "sessions.db"))
	if err != nil {
		t.Fatalf("no store after SIGTERM: %v\n%s", err, errb.String())
	}
	defer st.Close()
	sessions, err := st.ListSessions(context.Background(), scripted.ProjectDirName(bed.Workspace))
	if err != nil || len(sessions) != 1 {
		t.Fatalf("mirrored sessions after SIGTERM = %v, %v\n%s", sessions, err, errb.String())
	}
}

// `flower claude` refuses to start claude when the guards plugin has no
// flower-hook (it is built by scripts/setup.sh, not committed): without it
// the delegate guard could not run. The control with the binary starts
// claude (a stand-in that leaves a marker), so the test can fail.
func TestE2E_ClaudeDropInRefusesWithoutHookBinary(t *testing.T) {
	flowerbin.SkipShort(t, "it builds flower and runs it")
	t.Parallel()
	flower := testbed.BuildBinary(t, "./cmd/flower")
	dir := t.TempDir()
	marker := filepath.Join(dir, "claude-ran")
	fake := filepath.Join(dir, "claude")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	withBin := guardedPlugin(t)
	noBin := filepath.Join(dir, "plugin")
	if out, err := testbed.Command(t, "cp", "-r", withBin, noBin).CombinedOutput(); err != nil {
		t.Fatalf("copy plugin: %v %s", err, out)
	}
	if err := os.Remove(filepath.Join(noBin, "bin", "flower-hook")); err != nil {
		t.Fatal(err)
	}
	run := func(plugin string) (int, string) {
		cmd := testbed.Command(t, flower, "claude", "-p", "hi")
		cmd.Env = append(os.Environ(), "HOME="+dir, "FLOWER_CLAUDE="+fake, "FLOWER_PLUGIN_DIR="+plugin, "FLOWER_RUN_DIR="+filepath.Join(dir, "runs"))
		cmd.Stdin = strings.NewReader("")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.Run()
		return cmd.ProcessState.ExitCode(), out.String()
	}
	code, out := run(noBin)
	if code == 0 || !strings.Contains(out, "scripts/setup.sh") || !strings.Contains(out, "bin/flower-hook") {
		t.Errorf("without flower-hook: exit %d, output %q; want a refusal naming scripts/setup.sh", code, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("claude was started without the guard binary")
	}
	if code, out := run(withBin); code != 0 {
		t.Fatalf("control: exit %d %s", code, out)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("control: claude was not started")
	}
}
