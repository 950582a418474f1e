package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/internal/pinned"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// TestE2E_FlagsAfterPromptAndRunsWithWorkspace: `flower step "x" -C WS
// --json` from another directory honours both flags (the model sees only
// the prompt), writes nothing into that directory, keeps its run in
// WS/.flower/runs (git-ignored), and `flower runs -C WS --json` finds it.
func TestE2E_FlagsAfterPromptAndRunsWithWorkspace(t *testing.T) {
	t.Parallel()
	bed := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main", Replies: []scripted.Reply{{Text: "FLAGS-OK"}}}}})
	flower := testbed.BuildBinary(t, "./cmd/flower")
	env := flowerEnv(t, bed.Env(), bed.Claude)
	elsewhere := t.TempDir()
	run := func(args ...string) []byte {
		t.Helper()
		cmd := testbed.Command(t, flower, args...)
		cmd.Env, cmd.Dir = env, elsewhere
		out, _ := mustOutput(t, cmd, fmt.Sprintf("flower %q", args))
		return out
	}
	lines := schemaLines(t, run("step", "PROMPT-WORDS", "-C", bed.Workspace, "--json"), "step --json")
	last := lines[len(lines)-1]
	if last.Get("kind").String() != "step_result" || last.Get("text").String() != "FLAGS-OK" || !last.Get("ok").Bool() {
		t.Fatalf("last line: %s", last.Raw)
	}
	reqs := bed.Model.RequestsFor("main")
	if len(reqs) == 0 {
		t.Fatal("the model saw no request")
	}
	for _, r := range reqs {
		if u := r.Messages().Raw; !strings.Contains(u, "PROMPT-WORDS") || strings.Contains(u, "--json") {
			t.Errorf("the model's messages: %.400s", u)
		}
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Errorf("the current directory got %v", ents)
	}
	if b, err := os.ReadFile(filepath.Join(bed.Workspace, ".flower", ".gitignore")); err != nil || string(b) != "*\n" {
		t.Errorf(".flower/.gitignore = %q, %v", b, err)
	}
	runs := run("runs", "-C", bed.Workspace, "--json")
	arr := gjson.ParseBytes(runs)
	if !arr.IsArray() || len(arr.Array()) != 1 || arr.Get("0.workspace").String() != bed.Workspace || arr.Get("0.steps").Int() != 1 {
		t.Fatalf("runs --json: %s", runs)
	}
	checkSchema(t, "runs --json", arr.Get("0").Raw)
	show := gjson.ParseBytes(run("runs", "show", "--json", "-C", bed.Workspace))
	checkSchema(t, "runs show --json", show.Raw)
	if show.Get("steps.0.text").String() != "FLAGS-OK" {
		t.Errorf("runs show --json: %s", show.Raw)
	}
	// Control: from elsewhere without -C, the run is not found there.
	if got := gjson.ParseBytes(run("runs", "--json")); len(got.Array()) != 0 {
		t.Errorf("runs in the other directory: %s", got.Raw)
	}
}

// TestE2E_WordsThatAreNotAsks: help, version and a mistyped command answer
// at once and send nothing to the model; a one-word ask (the control) does.
func TestE2E_WordsThatAreNotAsks(t *testing.T) {
	t.Parallel()
	bed := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main", Replies: []scripted.Reply{{Text: "ASKED"}}}}})
	flower := testbed.BuildBinary(t, "./cmd/flower")
	env := flowerEnv(t, bed.Env(), bed.Claude)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"help"}, 0, "COMMANDS"},
		{[]string{"version"}, 0, "claude " + pinned.ClaudeVersion},
		{[]string{"--version"}, 0, "claude " + pinned.ClaudeVersion},
		{[]string{"sesions"}, 2, `did you mean "flower sessions"?`},
		{[]string{"sessions", "bogus"}, 2, "unknown command"},
	} {
		cmd := testbed.Command(t, flower, tc.args...)
		cmd.Env, cmd.Dir, cmd.Stdin = env, bed.Workspace, strings.NewReader("")
		out, _ := cmd.CombinedOutput()
		if cmd.ProcessState.ExitCode() != tc.code || !strings.Contains(string(out), tc.want) {
			t.Errorf("flower %q: exit %d, want %d and %q:\n%s", tc.args, cmd.ProcessState.ExitCode(), tc.code, tc.want, out)
		}
	}
	if n := len(bed.Model.Requests()); n != 0 {
		t.Fatalf("%d requests reached the model", n)
	}
	if _, err := os.Stat(filepath.Join(bed.Workspace, ".flower")); err == nil {
		t.Error("a word that is no ask created .flower")
	}
	// Control: a one-word step prompt does reach the model.
	cmd := testbed.Command(t, flower, "step", "sessions")
	cmd.Env, cmd.Dir = env, bed.Workspace
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "ASKED") {
		t.Fatalf("control: %v\n%s", err, out)
	}
	if len(bed.Model.Requests()) == 0 {
		t.Error("control: no request reached the model")
	}
}

// TestE2E_ClaudeHelpShowsFlowersPart: `flower claude --help` prints what
// flower adds, then claude's own help.
func TestE2E_ClaudeHelpShowsFlowersPart(t *testing.T) {
	t.Parallel()
	bed := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "unused", Replies: []scripted.Reply{{Text: "x"}}}}})
	flower := testbed.BuildBinary(t, "./cmd/flower")
	cmd := testbed.Command(t, flower, "claude", "--help")
	cmd.Env, cmd.Dir = dropInEnv(t, bed, t.TempDir()), bed.Workspace
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "A drop-in for claude") || !strings.Contains(string(out), "Usage: claude") {
		t.Fatalf("flower claude --help: %v\n%s", err, out)
	}
	if strings.Index(string(out), "A drop-in") > strings.Index(string(out), "Usage: claude") {
		t.Error("flower's part comes after claude's help")
	}
}

// TestE2E_InterruptedSaysHowToResume: a step cancelled off a terminal (one
// SIGINT) exits 130 and prints the command that resumes its session.
func TestE2E_InterruptedSaysHowToResume(t *testing.T) {
	t.Parallel()
	bed := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{
		Name: "main", Replies: []scripted.Reply{{Text: "too slow", DelayMS: 60000}},
	}}})
	flower := testbed.BuildBinary(t, "./cmd/flower")
	cmd := testbed.Command(t, flower, "step", "a long job", "-C", bed.Workspace, "--json")
	cmd.Env = flowerEnv(t, bed.Env(), bed.Claude)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	testbed.Await(t, 60*time.Second, "the step's request reaching the model", func() bool { return len(bed.Model.RequestsFor("main")) > 0 })
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	lines := jsonLines(t, out.Bytes())
	sid := lines[len(lines)-1].Get("session_id").String()
	want := "flower: interrupted — resume with: flower step -C " + bed.Workspace
	if cmd.ProcessState.ExitCode() != exitInterrupted || !strings.Contains(errb.String(), want) || sid == "" || !strings.Contains(errb.String(), "--resume "+sid) {
		t.Fatalf("exit %d, session %q, stderr:\n%s", cmd.ProcessState.ExitCode(), sid, errb.String())
	}
	if strings.Count(errb.String(), "interrupted") != 1 {
		t.Errorf("the interruption is reported more than once:\n%s", errb.String())
	}
}
