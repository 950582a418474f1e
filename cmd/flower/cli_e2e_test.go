package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/internal/pinned"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/flowerbin"
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
	env := flowerbin.Env(t, bed.Env(), bed.Claude)
	elsewhere := t.TempDir()
	run := func(args ...string) []byte {
		t.Helper()
		cmd := testbed.Command(t, flower, args...)
		cmd.Env, cmd.Dir = env, elsewhere
		out, _ := flowerbin.Output(t, cmd, fmt.Sprintf("flower %q", args))
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
	env := flowerbin.Env(t, bed.Env(), bed.Claude)
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
	if err != nil || !strings.Contains(string(out), "claude as a guarded coordinator") || !strings.Contains(string(out), "Usage: claude") {
		t.Fatalf("flower claude --help: %v\n%s", err, out)
	}
	if strings.Index(string(out), "claude as a guarded coordinator") > strings.Index(string(out), "Usage: claude") {
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
	cmd.Env = flowerbin.Env(t, bed.Env(), bed.Claude)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	testbed.Await(t, "the step's request reaching the model", func() bool { return len(bed.Model.RequestsFor("main")) > 0 })
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	lines := flowerbin.JSONLines(t, out.Bytes())
	sid := lines[len(lines)-1].Get("session_id").String()
	want := "flower: interrupted — resume with: flower step -C " + bed.Workspace
	if cmd.ProcessState.ExitCode() != exitInterrupted || !strings.Contains(errb.String(), want) || sid == "" || !strings.Contains(errb.String(), "--resume "+sid) {
		t.Fatalf("exit %d, session %q, stderr:\n%s", cmd.ProcessState.ExitCode(), sid, errb.String())
	}
	if strings.Count(errb.String(), "interrupted") != 1 {
		t.Errorf("the interruption is reported more than once:\n%s", errb.String())
	}
}

// writeBrief puts the demo's complete brief and goal into ws's notes, as a
// finished clarify and goal step leave them.
func writeBrief(t *testing.T, ws string) string {
	t.Helper()
	notes := filepath.Join(ws, ".flower", "notes")
	if err := os.MkdirAll(notes, 0o700); err != nil {
		t.Fatal(err)
	}
	brief := filepath.Join(notes, "需求.md")
	os.WriteFile(brief, []byte(flowerbin.DemoBrief+"\n"), 0o600)
	os.WriteFile(filepath.Join(notes, "目标.md"), []byte(flowerbin.DemoGoal+"\n"), 0o600)
	return brief
}

// TestE2E_OnlyAnAskStartsARun: in a workspace with a brief, each stray
// word, a bare flower and an empty ask exit 2 and send the model nothing
// (the bare ones say how to continue); then `flower continue`, piped,
// wakes the work without new words (announced at the top, clarify never
// asked), shown as plain lines for a person; its record in `runs --json`
// carries the verdict, `runs show` each denial and spill. The continue run
// is the control: the same bed does reach the model.
func TestE2E_OnlyAnAskStartsARun(t *testing.T) {
	t.Parallel()
	bed := testbed.NewFor(t, demoScript)
	flower := testbed.BuildBinary(t, "./cmd/flower")
	brief := writeBrief(t, bed.Workspace)
	runDir := filepath.Join(t.TempDir(), "runs")
	env := flowerbin.Env(t, bed.Env(), bed.Claude, "FLOWER_RUN_DIR="+runDir)
	command := func(args ...string) *exec.Cmd {
		cmd := testbed.Command(t, flower, args...)
		cmd.Env, cmd.Dir, cmd.Stdin = env, bed.Workspace, strings.NewReader("")
		return cmd
	}
	for _, args := range [][]string{{"status"}, {"list"}, {"init"}, {"logs"}, {"login"}, {"logs", "--json"}, {}, {""}, {"  "}, {"completion"}} {
		cmd := command(args...)
		out, _ := cmd.CombinedOutput()
		code := cmd.ProcessState.ExitCode()
		want := `is not a command. To ask flower, write a sentence: flower "…"`
		switch {
		case len(args) == 0 || strings.TrimSpace(args[0]) == "":
			want = "to wake it as it is: flower continue"
			if !strings.Contains(string(out), brief) {
				t.Errorf("flower %q does not name the brief:\n%s", args, out)
			}
		case args[0] == "completion":
			want = "completion needs one shell"
		}
		if code != exitUsage || !strings.Contains(string(out), want) {
			t.Errorf("flower %q: exit %d, want 2 and %q:\n%s", args, code, want, out)
		}
	}
	if n := len(bed.Model.Requests()); n != 0 {
		t.Fatalf("%d requests reached the model before any ask", n)
	}
	if _, err := os.Stat(runDir); err == nil {
		t.Error("a word that is no ask created the run dir")
	}
	flowerbin.MarkSelfTested(t, runDir, bed.Claude) // about the ask, not the guard canary

	out, stderr := flowerbin.Output(t, command("continue", "--timeout", "0"), "flower continue")
	flowerbin.NoJSONLine(t, "continue", out)
	for _, want := range []string{"waking the work: found the brief", "clarify is skipped; no new words: the goal is derived from the brief again",
		"○ [", "→ not_yet", "✓ [", "→ achieved", "done — $"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("continue's output lacks %q:\n%s\nstderr: %s", want, out, stderr)
		}
	}
	if n := len(bed.Model.RequestsFor("clarify")); n != 0 || len(bed.Model.RequestsFor("coordinator")) == 0 {
		t.Errorf("continue: %d requests to clarify, %d to the coordinator", n, len(bed.Model.RequestsFor("coordinator")))
	}
	if b, _ := os.ReadFile(brief); !strings.HasPrefix(string(b), flowerbin.DemoBrief) || strings.Contains(string(b), "唤醒") {
		t.Errorf("continue changed the brief: %q", b)
	}

	runs, _ := flowerbin.Output(t, command("runs", "--json"), "runs --json")
	arr := gjson.ParseBytes(runs)
	if len(arr.Array()) != 1 || arr.Get("0.verdict").String() != "achieved" || arr.Get("0.outcome").String() != "achieved" {
		t.Fatalf("runs --json: %s", runs)
	}
	checkSchema(t, "runs --json", arr.Get("0").Raw)
	text, _ := flowerbin.Output(t, command("runs"), "runs")
	if !strings.Contains(string(text), "OUTCOME") || !strings.Contains(string(text), "achieved") {
		t.Errorf("runs:\n%s", text)
	}
	show, _ := flowerbin.Output(t, command("runs", "show", "--json"), "runs show --json")
	detail := gjson.ParseBytes(show)
	checkSchema(t, "runs show --json", detail.Raw)
	denial, spill := detail.Get("denials.0"), detail.Get("spills.0")
	if denial.Get("tool").String() != "Write" || denial.Get("guard").String() != "delegate" || denial.Get("reason").String() == "" {
		t.Errorf("denials: %s", detail.Get("denials").Raw)
	}
	if st, err := os.Stat(spill.Get("path").String()); err != nil || spill.Get("bytes").Int() != st.Size() || st.Size() == 0 {
		t.Errorf("spills: %s (%v)", detail.Get("spills").Raw, err)
	}
	showText, _ := flowerbin.Output(t, command("runs", "show"), "runs show")
	if !strings.Contains(string(showText), "denied     Write in work") || !strings.Contains(string(showText), "spilled    Bash output of") {
		t.Errorf("runs show:\n%s", showText)
	}
}
