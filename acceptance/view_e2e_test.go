package acceptance

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"

	"github.com/flowerhq/flower/internal/demo"
	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/testkit/testbed"
)

// TestE2E_DemoPipedForPeople: `flower demo --json=false | cat` under
// FLOWER_JSON=1 prints the human view as plain lines: no JSON, no redraws,
// and the clarifier's question with its answer on stdout (--json=false wins
// over FLOWER_JSON=1; TestJSONFlag holds the rest of the flag's table,
// FLOWER_JSON=0 among it). Without --keep the demo leaves no temporary
// folder behind. (TestE2E_Demo is the control: --json makes the same pipe
// JSON, and --keep keeps the folder.) One demo run: each costs six claude
// processes.
func TestE2E_DemoPipedForPeople(t *testing.T) {
	t.Parallel()
	claude := testbed.ClaudePath(t)
	flower := testbed.BuildBinary(t, "./cmd/flower")
	tmp := t.TempDir()
	cmd := testbed.Command(t, flower, "demo", "--json=false")
	cmd.Env = append(flowerbin.Env(t, os.Environ(), claude), "TMPDIR="+tmp, "FLOWER_JSON=1")
	out, _ := flowerbin.Output(t, cmd, "demo")
	flowerbin.NoJSONLine(t, "--json=false", out)
	for _, want := range []string{"? hello.txt 里写什么问候语?", "> " + demo.Answer, "→ achieved", "done — $"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	// (claude keeps its own sockets in TMPDIR; the demo's folder is flower-demo-*.)
	if left, _ := filepath.Glob(filepath.Join(tmp, "flower-demo-*")); len(left) != 0 {
		t.Errorf("demo left %v in TMPDIR", left)
	}
}

// TestE2E_TerminalFitsTheWidth: `flower demo` at a colour terminal of 60
// columns and a dumb one of 50 writes no line wider than the terminal (a
// wrapped line comes back joined) and leaves no status line behind (each is
// redrawn in place, then replaced by its step's end line); the summary's
// paths are whole at both; colour only where the terminal may have it,
// ASCII marks under TERM=dumb. Control: a line wider than the pane is caught
// by the same check. (Two demo runs, not four: each costs six claude
// processes, and a wider colour terminal proves nothing the 60 does not.)
func TestE2E_TerminalFitsTheWidth(t *testing.T) {
	t.Parallel()
	claude := testbed.ClaudePath(t)
	flower := testbed.BuildBinary(t, "./cmd/flower")
	env := append(flowerbin.Env(t, os.Environ(), claude), "TMPDIR="+t.TempDir())
	overWide := func(lines []string, cols int) []string {
		var bad []string
		for _, l := range lines {
			if l = strings.TrimRight(l, " "); runewidth.StringWidth(l) > cols || strings.HasPrefix(l, "[") {
				bad = append(bad, l)
			}
		}
		return bad
	}
	// At 60 columns a colour terminal (redrawn, coloured marks, the
	// summary's paths wrapped whole); at 50 NO_COLOR and TERM=dumb: no
	// colour, ASCII marks, still no line wider than the pane.
	for _, tc := range []struct {
		cols  int
		extra []string
	}{{60, nil}, {50, []string{"NO_COLOR=1", "TERM=dumb"}}} {
		t.Run(strconv.Itoa(tc.cols), func(t *testing.T) {
			t.Parallel()
			term := flowerbin.NewTerminalSized(t, append(env, tc.extra...), t.TempDir(), flower+" demo", tc.cols, 30)
			term.WaitFor("FLOWER-EXIT=0")
			lines := term.Lines()
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
			colored := strings.Contains(term.Tmux("capture-pane", "-t", "t", "-p", "-e", "-S", "-"), "\033[32m")
			glyphs := strings.ContainsAny(screen, "✓·→")
			if dumb := tc.extra != nil; colored == dumb || glyphs == dumb {
				t.Errorf("%d columns (dumb, no colour: %v): colour %v, glyphs %v:\n%s", tc.cols, dumb, colored, glyphs, screen)
			}
		})
	}
	t.Run("control", func(t *testing.T) {
		t.Parallel()
		term := flowerbin.NewTerminalSized(t, env, t.TempDir(), "printf '%060d\\n' 0; printf '[1/3] stacked\\n'", 50, 10)
		term.WaitFor("FLOWER-EXIT=0")
		if bad := overWide(term.Lines(), 50); len(bad) != 2 {
			t.Errorf("control: caught %q", bad)
		}
	})
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

// TestE2E_DumbTerminalErrors: under TERM=dumb flower's own error lines are
// ASCII too (the stray word's hint, flower "..."); the control, TERM=xterm,
// prints the same line with its ellipsis.
func TestE2E_DumbTerminalErrors(t *testing.T) {
	flowerbin.SkipShort(t, "it builds flower and runs it")
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
