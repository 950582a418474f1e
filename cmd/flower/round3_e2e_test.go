package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"
	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/internal/pinned"
	"github.com/flowerhq/flower/testkit/testbed"
)

// writeBrief puts the demo's complete brief and goal into ws's notes, as a
// finished clarify and goal step leave them.
func writeBrief(t *testing.T, ws string) string {
	t.Helper()
	notes := filepath.Join(ws, ".flower", "notes")
	if err := os.MkdirAll(notes, 0o700); err != nil {
		t.Fatal(err)
	}
	brief := filepath.Join(notes, "需求.md")
	os.WriteFile(brief, []byte(demoBrief+"\n"), 0o600)
	os.WriteFile(filepath.Join(notes, "目标.md"), []byte(demoGoal+"\n"), 0o600)
	return brief
}

// noJSONLine fails when a line of out is a JSON object, or out redraws.
func noJSONLine(t *testing.T, what string, out []byte) {
	t.Helper()
	for _, l := range bytes.Split(out, []byte("\n")) {
		if l = bytes.TrimSpace(l); len(l) > 0 && l[0] == '{' && json.Valid(l) {
			t.Errorf("%s: a JSON line: %.200s", what, l)
		}
	}
	if bytes.ContainsAny(out, "\r\033") {
		t.Errorf("%s: piped output redraws or colours: %q", what, tailOf(out))
	}
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
	env := flowerEnv(t, bed.Env(), bed.Claude, "FLOWER_RUN_DIR="+runDir)
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

	out, stderr := mustOutput(t, command("continue", "--timeout", "0"), "flower continue")
	noJSONLine(t, "continue", out)
	for _, want := range []string{"waking the work: found the brief", "clarify is skipped; no new words: the goal is derived from the brief again",
		"○ [", "→ not_yet", "✓ [", "→ achieved", "done — $"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("continue's output lacks %q:\n%s\nstderr: %s", want, out, stderr)
		}
	}
	if n := len(bed.Model.RequestsFor("clarify")); n != 0 || len(bed.Model.RequestsFor("coordinator")) == 0 {
		t.Errorf("continue: %d requests to clarify, %d to the coordinator", n, len(bed.Model.RequestsFor("coordinator")))
	}
	if b, _ := os.ReadFile(brief); !strings.HasPrefix(string(b), demoBrief) || strings.Contains(string(b), "唤醒") {
		t.Errorf("continue changed the brief: %q", b)
	}

	runs, _ := mustOutput(t, command("runs", "--json"), "runs --json")
	arr := gjson.ParseBytes(runs)
	if len(arr.Array()) != 1 || arr.Get("0.verdict").String() != "achieved" || arr.Get("0.outcome").String() != "achieved" {
		t.Fatalf("runs --json: %s", runs)
	}
	checkSchema(t, "runs --json", arr.Get("0").Raw)
	text, _ := mustOutput(t, command("runs"), "runs")
	if !strings.Contains(string(text), "OUTCOME") || !strings.Contains(string(text), "achieved") {
		t.Errorf("runs:\n%s", text)
	}
	show, _ := mustOutput(t, command("runs", "show", "--json"), "runs show --json")
	detail := gjson.ParseBytes(show)
	checkSchema(t, "runs show --json", detail.Raw)
	denial, spill := detail.Get("denials.0"), detail.Get("spills.0")
	if denial.Get("tool").String() != "Write" || denial.Get("guard").String() != "delegate" || denial.Get("reason").String() == "" {
		t.Errorf("denials: %s", detail.Get("denials").Raw)
	}
	if st, err := os.Stat(spill.Get("path").String()); err != nil || spill.Get("bytes").Int() != st.Size() || st.Size() == 0 {
		t.Errorf("spills: %s (%v)", detail.Get("spills").Raw, err)
	}
	showText, _ := mustOutput(t, command("runs", "show"), "runs show")
	if !strings.Contains(string(showText), "denied     Write in work") || !strings.Contains(string(showText), "spilled    Bash output of") {
		t.Errorf("runs show:\n%s", showText)
	}
}

// TestE2E_DemoPipedForPeople: `flower demo --json=false | cat` (and with
// FLOWER_JSON=0) prints the human view as plain lines: no JSON, no
// redraws, and the clarifier's question with its answer on stdout;
// --json=false wins over FLOWER_JSON=1. (TestE2E_Demo is the control:
// --json makes the same pipe JSON.)
func TestE2E_DemoPipedForPeople(t *testing.T) {
	t.Parallel()
	claude := testbed.ClaudePath(t)
	flower := testbed.BuildBinary(t, "./cmd/flower")
	for _, tc := range []struct {
		name string
		args []string
		env  string
	}{{"--json=false", []string{"demo", "--json=false"}, "FLOWER_JSON=1"}, {"FLOWER_JSON=0", []string{"demo"}, "FLOWER_JSON=0"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cmd := testbed.Command(t, flower, tc.args...)
			cmd.Env = append(flowerEnv(t, os.Environ(), claude), "TMPDIR="+t.TempDir(), tc.env)
			out, _ := mustOutput(t, cmd, "demo")
			noJSONLine(t, tc.name, out)
			for _, want := range []string{"? hello.txt 里写什么问候语?", "> " + demoAnswer, "→ achieved", "done — $"} {
				if !strings.Contains(string(out), want) {
					t.Errorf("stdout lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

// TestE2E_TerminalFitsTheWidth: `flower demo` at a terminal of 50 and of
// 120 columns writes no line wider than the terminal (a wrapped line comes
// back joined) and leaves no status line behind (each is redrawn in place,
// then replaced by its step's end line); colour only where the terminal
// may have it, ASCII marks under TERM=dumb. Control: a line wider than the
// pane is caught by the same check.
func TestE2E_TerminalFitsTheWidth(t *testing.T) {
	t.Parallel()
	claude := testbed.ClaudePath(t)
	flower := testbed.BuildBinary(t, "./cmd/flower")
	env := append(flowerEnv(t, os.Environ(), claude), "TMPDIR="+t.TempDir())
	overWide := func(lines []string, cols int) []string {
		var bad []string
		for _, l := range lines {
			if l = strings.TrimRight(l, " "); runewidth.StringWidth(l) > cols || strings.HasPrefix(l, "[") {
				bad = append(bad, l)
			}
		}
		return bad
	}
	// At 50 and 120 columns a colour terminal (redrawn, coloured marks);
	// at 80 NO_COLOR and TERM=dumb: no colour, ASCII marks.
	for _, tc := range []struct {
		cols  int
		extra []string
	}{{50, nil}, {60, nil}, {120, nil}, {80, []string{"NO_COLOR=1", "TERM=dumb"}}} {
		t.Run(strconv.Itoa(tc.cols), func(t *testing.T) {
			t.Parallel()
			term := newTerminalSized(t, append(env, tc.extra...), t.TempDir(), flower+" demo", tc.cols, 30)
			term.waitFor("FLOWER-EXIT=0")
			lines := term.lines()
			screen := strings.Join(lines, "\n")
			if bad := overWide(lines, tc.cols); len(bad) > 0 {
				t.Errorf("%d columns: lines too wide or left stacked: %q\nscreen:\n%s", tc.cols, bad, screen)
			}
			if !strings.Contains(screen, "review #2") {
				t.Errorf("the demo's steps are not on screen:\n%s", screen)
			}
			// The summary's paths are whole at every width: wrapped onto
			// lines of their own, never clipped.
			for label, suffix := range map[string]string{"events": "events.jsonl", "goal": ".md", "brief": ".md"} {
				if p := summaryPath(lines, label); !strings.HasSuffix(p, suffix) || strings.Contains(p, "…") || strings.Contains(p, "...") {
					t.Errorf("%d columns: the summary's %s path is %q, not whole:\n%s", tc.cols, label, p, screen)
				}
			}
			colored := strings.Contains(term.tmux("capture-pane", "-t", "t", "-p", "-e", "-S", "-"), "\033[32m")
			glyphs := strings.ContainsAny(screen, "✓·→")
			if dumb := tc.extra != nil; colored == dumb || glyphs == dumb {
				t.Errorf("%d columns (dumb, no colour: %v): colour %v, glyphs %v:\n%s", tc.cols, dumb, colored, glyphs, screen)
			}
		})
	}
	t.Run("control", func(t *testing.T) {
		t.Parallel()
		term := newTerminalSized(t, env, t.TempDir(), "printf '%060d\\n' 0; printf '[1/3] stacked\\n'", 50, 10)
		term.waitFor("FLOWER-EXIT=0")
		if bad := overWide(term.lines(), 50); len(bad) != 2 {
			t.Errorf("control: caught %q", bad)
		}
	})
}

// TestE2E_DoctorAndVersionJSON: doctor --json is one object whose ok says
// whether any check failed, with the self-test among its checks; a hook
// that never denies (the control) fails it and exits 1. version --json
// names the pinned claude.
func TestE2E_DoctorAndVersionJSON(t *testing.T) {
	t.Parallel()
	claude := testbed.ClaudePath(t)
	flower := testbed.BuildBinary(t, "./cmd/flower")
	hook := testbed.BuildBinary(t, "./cmd/flower-hook")
	env := append(os.Environ(), "HOME="+t.TempDir(), "ANTHROPIC_API_KEY=sk-test", "FLOWER_CLAUDE="+claude)
	for _, tc := range []struct {
		hook, selfTest string
	}{{hook, "ok"}, {"/bin/true", "fail"}} {
		cmd := testbed.Command(t, flower, "doctor", "--json", "--hook", tc.hook)
		cmd.Env, cmd.Dir = env, t.TempDir()
		out, _ := cmd.Output()
		js := gjson.ParseBytes(out)
		checkSchema(t, "doctor --json", js.Raw)
		failed := false
		for _, c := range js.Get("checks").Array() {
			failed = failed || c.Get("status").String() == "fail"
		}
		st := js.Get(`checks.#(name=="self-test").status`).String()
		if st != tc.selfTest || js.Get("ok").Bool() == failed || (cmd.ProcessState.ExitCode() == 0) == failed {
			t.Errorf("--hook %s: exit %d, self-test %q: %s", tc.hook, cmd.ProcessState.ExitCode(), st, out)
		}
	}
	out, _ := mustOutput(t, testbed.Command(t, flower, "version", "--json"), "version --json")
	if v := gjson.ParseBytes(out); v.Get("kind").String() != "version" || v.Get("claude").String() != pinned.ClaudeVersion {
		t.Errorf("version --json: %s", out)
	}
}

// TestE2E_DumbTerminalErrors: under TERM=dumb flower's own error lines are
// ASCII too (the stray word's hint, flower "..."); the control, TERM=xterm,
// prints the same line with its ellipsis.
func TestE2E_DumbTerminalErrors(t *testing.T) {
	skipShort(t, "it builds flower and runs it")
	t.Parallel()
	flower := testbed.BuildBinary(t, "./cmd/flower")
	for term, want := range map[string]string{"dumb": `flower "..."`, "xterm": `flower "…"`} {
		cmd := testbed.Command(t, flower, "status")
		cmd.Env, cmd.Dir = append(testbed.BaseEnv(t.TempDir(), "http://127.0.0.1:9"), "TERM="+term), t.TempDir()
		_, errOut, code := testbed.Exec(t, cmd)
		if code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("TERM=%s: exit %d, stderr lacks %q:\n%s", term, code, want, errOut)
		}
		if i := strings.IndexFunc(errOut, func(r rune) bool { return r > 127 }); term == "dumb" && i >= 0 {
			t.Errorf("TERM=dumb: not ASCII at %d:\n%s", i, errOut)
		}
	}
}

// summaryPath is the path the end-of-run summary shows for label: on the
// label's line, or, when it did not fit, the pieces on the lines below it
// put together.
func summaryPath(lines []string, label string) string {
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) == 0 || f[0] != label || !strings.HasPrefix(l, "  "+label) {
			continue
		}
		if len(f) > 1 {
			return strings.Join(f[1:], " ")
		}
		var path strings.Builder
		for _, next := range lines[i+1:] {
			if next == "" || strings.HasPrefix(next, "  ") {
				break
			}
			path.WriteString(strings.TrimRight(next, " "))
		}
		return path.String()
	}
	return ""
}
