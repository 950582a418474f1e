package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/internal/pinned"
)

// testEnv is a cmdEnv on buffers with an empty environment and no terminal.
func testEnv(stdin string) (*cmdEnv, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &cmdEnv{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv: func(string) string { return "" }, IsTTY: func(any) bool { return false }, factory: unitFactory(&errb)}, &out, &errb
}

// parse runs flower args in process and returns the options the command
// would have run with (nil if none ran), the exit code and stderr.
func parse(t *testing.T, args ...string) (any, int, string) {
	t.Helper()
	e, _, errb := testEnv("")
	var got any
	e.parsed = func(o any) error { got = o; return nil }
	code := run(context.Background(), e, append([]string{"flower"}, args...))
	return got, code, errb.String()
}

// TestEveryFlagHasAnEnvVar: every flag of every command has a FLOWER_*
// variable.
func TestEveryFlagHasAnEnvVar(t *testing.T) {
	e, _, _ := testEnv("")
	app := NewApp(e)
	var walk func(path string, flags []cli.Flag, cmds []*cli.Command)
	walk = func(path string, flags []cli.Flag, cmds []*cli.Command) {
		for _, f := range flags {
			if f.Names()[0] == "version" || f.Names()[0] == "help" {
				continue // an answer, not a setting
			}
			if f.Names()[0] == "trust-workspace-api" {
				continue // one half of an opt-in whose other half is FLOWER_TRUST_WORKSPACE_API: a variable of its own would make one
			}
			ev, ok := f.(interface{ GetEnvVars() []string })
			if !ok || len(ev.GetEnvVars()) == 0 || !strings.HasPrefix(ev.GetEnvVars()[0], "FLOWER_") {
				t.Errorf("%s --%s has no FLOWER_* variable", path, f.Names()[0])
			}
		}
		for _, c := range cmds {
			walk(path+" "+c.Name, c.Flags, c.Subcommands)
		}
	}
	walk("flower", app.Flags, app.Commands)
}

// TestFlagKindsAgree: normalizeArgs decides by name alone whether a flag
// takes a value, so a name must mean the same kind on every command.
func TestFlagKindsAgree(t *testing.T) {
	e, _, _ := testEnv("")
	app := NewApp(e)
	seen := map[string]bool{}
	var walk func(path string, flags []cli.Flag, cmds []*cli.Command)
	walk = func(path string, flags []cli.Flag, cmds []*cli.Command) {
		for _, f := range flags {
			for _, n := range f.Names() {
				if k, ok := seen[n]; ok && k != takesValue(f) {
					t.Errorf("%s: --%s takes a value here but not elsewhere (or the reverse)", path, n)
				}
				seen[n] = takesValue(f)
			}
		}
		for _, c := range cmds {
			walk(path+" "+c.Name, c.Flags, c.Subcommands)
		}
	}
	walk("flower", app.Flags, app.Commands)
	if !seen["workspace"] || seen["json"] {
		t.Fatalf("control: -C takes a value, --json does not: %v", seen)
	}
}

// TestParse: every command takes its flags before and after its
// positionals, "--" ends the flags, and the options reach the run function.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want any            // the options type
		set  map[string]any // fields of it that must hold these values
	}{
		{[]string{"step", "-C", "/ws", "x", "--json"}, &stepOptions{}, map[string]any{"Workspace": "/ws", "JSON": true, "Prompt": []string{"x"}}},
		{[]string{"step", "x", "--json", "-C", "/ws"}, &stepOptions{}, map[string]any{"Workspace": "/ws", "JSON": true, "Prompt": []string{"x"}}},
		{[]string{"step", "x", "--max-turns=3", "--role", "worker"}, &stepOptions{}, map[string]any{"MaxTurns": 3, "Role": "worker", "Prompt": []string{"x"}}},
		{[]string{"step", "--json", "--", "--not-a-flag", "-C"}, &stepOptions{}, map[string]any{"JSON": true, "Prompt": []string{"--not-a-flag", "-C"}}},
		{[]string{"-C", "/ws", "step", "x"}, &stepOptions{}, map[string]any{"Workspace": "/ws", "Prompt": []string{"x"}}},
		{[]string{"fix the test", "--isolate"}, &starterOptions{}, map[string]any{"Isolate": true, "Ask": []string{"fix the test"}}},
		{[]string{"fix", "--rounds", "5", "the", "test"}, &starterOptions{}, map[string]any{"Rounds": 5, "Ask": []string{"fix", "the", "test"}}},
		{[]string{"--timeout", "5m", "-"}, &starterOptions{}, map[string]any{"Ask": []string{"-"}}},
		{[]string{"--", "--isolate"}, &starterOptions{}, map[string]any{"Isolate": false, "Ask": []string{"--isolate"}}},
		{[]string{"--", "runs"}, &starterOptions{}, map[string]any{"Ask": []string{"", "runs"}}}, // an ask, not the command
		{[]string{"--", "fix"}, &starterOptions{}, map[string]any{"Ask": []string{"fix"}}},       // -- asks one word
		{[]string{"写个hello文件"}, &starterOptions{}, map[string]any{"Ask": []string{"写个hello文件"}}}, // Chinese needs no spaces
		{[]string{"runs", "--json", "-C", "/ws"}, &runsOptions{}, map[string]any{"Workspace": "/ws", "JSON": true}},
		{[]string{"-C", "/ws", "runs"}, &runsOptions{}, map[string]any{"Workspace": "/ws"}},
		{[]string{"runs", "show", "R1", "--json"}, &runsOptions{}, map[string]any{"JSON": true, "Args": []string{"R1"}}},
		{[]string{"sessions", "show", "abc", "--trimmed", "--trim"}, &sessionsOptions{}, map[string]any{"Trimmed": true, "Trim": true, "Args": []string{"abc"}}},
		{[]string{"sessions", "list", "--json", "-C", "/ws"}, &sessionsOptions{}, map[string]any{"JSON": true, "Workspace": "/ws"}},
		{[]string{"sessions", "import", "p.jsonl", "--run-dir", "/r"}, &sessionsOptions{}, map[string]any{"RunDir": "/r", "Args": []string{"p.jsonl"}}},
		{[]string{"ask", "where are we?", "-C", "/ws"}, &askOptions{}, map[string]any{"Workspace": "/ws", "Question": []string{"where are we?"}}},
		{[]string{"wake-state", "--json", "-C", "/ws", "--isolate"}, &wakeOptions{}, map[string]any{"JSON": true, "Isolate": true, "Workspace": "/ws"}},
		{[]string{"doctor", "-C", "/ws", "--claude", "/c"}, &doctorOptions{}, map[string]any{"Workspace": "/ws", "Claude": "/c"}},
		{[]string{"demo", "--keep", "--json"}, &demoOptions{}, map[string]any{"Keep": true, "JSON": true}},
		{[]string{"model", "serve", "--script", "s.yaml"}, &modelServeOptions{}, map[string]any{"Script": "s.yaml", "Addr": "127.0.0.1:0"}},
		{[]string{"model", "serve", "-v", "--script", "s.yaml"}, &modelServeOptions{}, map[string]any{"Script": "s.yaml", "Verbose": true}},
		{[]string{"model", "serve", "--cassette", "c.jsonl", "--addr", "127.0.0.1:9"}, &modelServeOptions{}, map[string]any{"Cassette": "c.jsonl", "Addr": "127.0.0.1:9"}},
		{[]string{"model", "record", "--out", "c.jsonl", "--upstream", "https://api.anthropic.com"}, &modelRecordOptions{}, map[string]any{"Out": "c.jsonl", "Upstream": "https://api.anthropic.com", "Addr": "127.0.0.1:0"}},
	} {
		got, code, stderr := parse(t, tc.args...)
		if code != 0 || got == nil {
			t.Errorf("flower %q: exit %d, ran %v: %s", tc.args, code, got != nil, stderr)
			continue
		}
		if reflect.TypeOf(got) != reflect.TypeOf(tc.want) {
			t.Errorf("flower %q ran %T, want %T", tc.args, got, tc.want)
			continue
		}
		v := reflect.ValueOf(got).Elem()
		for field, want := range tc.set {
			if g := v.FieldByName(field).Interface(); !reflect.DeepEqual(g, want) {
				t.Errorf("flower %q: %s = %#v, want %#v", tc.args, field, g, want)
			}
		}
	}
	// flower claude: everything after the command is claude's, untouched.
	got, _, _ := parse(t, "claude", "-p", "hi", "--help", "--", "-C")
	if a, _ := got.(*[]string); a == nil || !reflect.DeepEqual(*a, []string{"-p", "hi", "--help", "--", "-C"}) {
		t.Errorf("flower claude args: %#v", got)
	}
}

// TestUsageErrorsExit2: bad flags, arguments and near-miss commands are
// usage errors (exit 2): one line naming the fix, then the usage line of
// the command at hand; nothing runs.
func TestUsageErrorsExit2(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		want      string // in the message
		wantUsage string
	}{
		{[]string{"--bogus"}, "unknown flag --bogus", rootUsage},
		{[]string{"step", "--bogus", "x"}, "unknown flag --bogus", "flower step [flags] PROMPT|-"},
		{[]string{"step", "x", "--jsn"}, "did you mean --json?", "flower step [flags] PROMPT|-"},
		{[]string{"step", "x", "y"}, "quote the prompt", "flower step [flags] PROMPT|-"},
		{[]string{"step"}, "got 0 arguments", "flower step [flags] PROMPT|-"},
		{[]string{"sesions", "list"}, `did you mean "flower sessions"?`, "flower COMMAND"},
		{[]string{"sesions"}, "flower -- sesions)", "flower COMMAND"},
		{[]string{"sesions", "list it"}, "flower -- sesions 'list it')", "flower COMMAND"},
		{[]string{"vresion"}, `did you mean "flower version"?`, "flower COMMAND"},
		{[]string{"sessions", "bogus"}, `unknown command "flower sessions bogus"`, "flower sessions list|show"},
		{[]string{"sessions", "lst"}, `did you mean "flower sessions list"?`, "flower sessions COMMAND"},
		{[]string{"runs", "shwo"}, `did you mean "flower runs show"?`, "flower runs COMMAND"},
		{[]string{"model", "bogus"}, `unknown command "flower model bogus"`, "flower model serve"},
		{[]string{"--timeout", "5", "do x"}, `--timeout "5" is not a duration: write 5s or 5m`, rootUsage},
		{[]string{"step", "--retry-delay", "2", "x"}, "write 5s or 5m", "flower step"},
		{[]string{"--rounds", "abc", "do x"}, `--rounds "abc" is not a whole number, e.g. 3`, rootUsage},
		{[]string{"sessions", "list", "--bogus"}, "unknown flag --bogus", "flower sessions list [flags]"},
		{[]string{"sessions", "import", "x", "--trim"}, "unknown flag --trim", "flower sessions import"},
		{[]string{"runs", "extra"}, "flower runs show extra", "flower runs"},
		{[]string{"model", "serve"}, "needs --script", "flower model serve"},
		{[]string{"model", "serve", "--script", "s.yaml", "--cassette", "c.jsonl"}, "one of them", "flower model serve"},
		{[]string{"model", "record", "--out", "c.jsonl"}, "needs --upstream URL and --out FILE", "flower model record"},
		{[]string{"doctor", "extra"}, "takes no arguments", "flower doctor"},
		{[]string{"demo", "extra"}, "takes no arguments", "flower demo"},
		{[]string{"ask"}, "needs a question", "flower ask"},
		{[]string{"wake-state", "x"}, "takes no arguments", "flower wake-state"},
		{[]string{"version", "x"}, "takes no arguments", "flower version"},
	} {
		// These fail before any work starts, so the run functions run for real.
		e, _, errb := testEnv("")
		code := run(context.Background(), e, append([]string{"flower"}, tc.args...))
		msg := errb.String()
		if code != exitUsage || !strings.Contains(msg, tc.want) || !strings.Contains(msg, "Usage: "+tc.wantUsage) || strings.Count(msg, "\n") != 2 {
			t.Errorf("flower %q: exit %d, stderr:\n%s(want %q and usage %q)", tc.args, code, msg, tc.want, tc.wantUsage)
		}
		if strings.Contains(msg, "harness:") || strings.Contains(msg, "sessionstore:") {
			t.Errorf("flower %q: internal prefix in %q", tc.args, msg)
		}
	}
}

// TestStrayWordsAreNoAsks: a lone ASCII word that names no command is a
// usage error naming the commands and how to ask; nothing runs. Controls: a
// sentence, a Chinese ask without spaces, "-" and "-- word" are asks.
func TestStrayWordsAreNoAsks(t *testing.T) {
	for _, w := range []string{"status", "list", "init", "logs", "login", "x", "README.md", "fix-it", "--json=false status"} {
		args := strings.Fields(w)
		got, code, stderr := parse(t, args...)
		word := args[len(args)-1]
		if got != nil || code != exitUsage || !strings.Contains(stderr, fmt.Sprintf("%q is not a command. To ask flower, write a sentence", word)) ||
			!strings.Contains(stderr, "commands: step, runs") {
			t.Errorf("flower %s: ran %v, exit %d:\n%s", w, got != nil, code, stderr)
		}
	}
	for _, args := range [][]string{{"fix the test"}, {"fix", "the", "test"}, {"写个hello文件"}, {"-"}, {"--", "status"}} {
		if got, code, stderr := parse(t, args...); code != 0 || got == nil {
			t.Errorf("control: flower %q: exit %d: %s", args, code, stderr)
		}
	}
}

// TestHelpAndVersionAnswerAtOnce: help and version words print and exit 0;
// no command runs (the parsed hook fails the test if one does).
func TestHelpAndVersionAnswerAtOnce(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"help"}, []string{"flower [flags] \"what you want\"", "step", "sessions", "--isolate", "FLAGS of flower"}},
		{[]string{"--help"}, []string{"flower [flags] \"what you want\""}},
		{[]string{"help", "step"}, []string{"flower step", "--max-turns", "PROMPT|-"}},
		{[]string{"step", "x", "--help"}, []string{"flower step", "--max-turns"}},
		{[]string{"help", "sessions", "show"}, []string{"--trimmed"}},
		{[]string{"sessions", "show", "-h"}, []string{"--trimmed"}},
		{[]string{"version"}, []string{pinned.ClaudeVersion, runtime.Version(), "flower "}},
		{[]string{"--version"}, []string{pinned.ClaudeVersion, runtime.Version()}},
		{[]string{"-v"}, []string{pinned.ClaudeVersion, runtime.Version()}},
	} {
		e, out, errb := testEnv("")
		e.parsed = func(o any) error { t.Errorf("flower %q ran a command with %#v", tc.args, o); return nil }
		if code := run(context.Background(), e, append([]string{"flower"}, tc.args...)); code != 0 {
			t.Errorf("flower %q: exit %d: %s", tc.args, code, errb.String())
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("flower %q: stdout lacks %q:\n%s", tc.args, w, out.String())
			}
		}
	}
}

// TestWorkspaceChecked: on every command that takes -C, a missing or
// non-directory workspace is exit 2 naming it, and nothing is created.
func TestWorkspaceChecked(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope")
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o600)
	for _, bad := range []string{missing, file} {
		for _, args := range [][]string{
			{"do x"}, {"step", "x"}, {"runs"}, {"runs", "show"}, {"sessions", "list"}, {"sessions", "show", "id"},
			{"sessions", "import", file}, {"ask", "q"}, {"wake-state"}, {"doctor"},
		} {
			e, _, errb := testEnv("")
			code := run(context.Background(), e, append(append([]string{"flower"}, args...), "-C", bad))
			if code != exitUsage || !strings.Contains(errb.String(), "workspace "+bad) {
				t.Errorf("flower %q -C %s: exit %d, %q", args, bad, code, errb.String())
			}
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("the missing workspace was created")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("something was written beside the workspace: %v", ents)
	}
	// Control: an existing workspace passes the check.
	e, _, errb := testEnv("")
	if code := run(context.Background(), e, []string{"flower", "wake-state", "-C", dir}); code != 0 {
		t.Errorf("control: wake-state -C %s: exit %d, %s", dir, code, errb.String())
	}
}

// TestNormalizeArgs: the reordering itself, token by token.
func TestNormalizeArgs(t *testing.T) {
	e, _, _ := testEnv("")
	app := NewApp(e)
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"step x --json", []string{"step", "--json", "--", "x"}},
		{"-C /w step x", []string{"step", "-C", "/w", "--", "x"}},
		{"step -C /w x -- -y --z", []string{"step", "-C", "/w", "--", "x", "-y", "--z"}},
		{"sessions show id --trimmed", []string{"sessions", "show", "--trimmed", "--", "id"}},
		{"fix --rounds 3 it", []string{"--rounds", "3", "--", "fix", "it"}},
		{"-- runs", []string{"--", "", "runs"}},
		{"help sessions show", []string{"sessions", "show", "--help"}},
		{"claude -p x --model y", []string{"claude", "-p", "x", "--model", "y"}},
		{"--timeout=5m x y", []string{"--timeout=5m", "--", "x", "y"}},
	} {
		got, err := normalizeArgs(app, append([]string{"flower"}, strings.Fields(tc.in)...))
		want := append([]string{"flower"}, tc.want...)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q → %q (%v), want %q", tc.in, got, err, want)
		}
	}
}

// TestHelpSpeaksToUsers: every flag that takes a value names it (--timeout
// DURATION, not --timeout value), and no help text names flower's Go types.
// Control: a flag without a placeholder is caught.
func TestHelpSpeaksToUsers(t *testing.T) {
	placeholder := func(f cli.Flag) bool {
		u, ok := f.(interface{ GetUsage() string })
		return !takesValue(f) || ok && strings.Count(u.GetUsage(), "`") >= 2
	}
	if placeholder(&cli.DurationFlag{Name: "timeout", Usage: "how long"}) {
		t.Fatal("control: a value flag without a placeholder passes")
	}
	e, _, _ := testEnv("")
	app := NewApp(e)
	internal := regexp.MustCompile(`Runtime|AgentSpec|StepResult|\b(harness|flow|scripted|sessionstore|hooks)\.[A-Z]`)
	var walk func(path string, flags []cli.Flag, cmds []*cli.Command)
	walk = func(path string, flags []cli.Flag, cmds []*cli.Command) {
		for _, f := range flags {
			if !placeholder(f) {
				t.Errorf("%s --%s takes a value but its help names no placeholder", path, f.Names()[0])
			}
		}
		for _, c := range cmds {
			for _, text := range []string{c.Usage, c.Description, c.UsageText} {
				if w := internal.FindString(text); w != "" {
					t.Errorf("%s %s: help names %q", path, c.Name, w)
				}
			}
			walk(path+" "+c.Name, c.Flags, c.Subcommands)
		}
	}
	walk("flower", app.Flags, app.Commands)
}

// unitFactory is the factory of testEnv: the real session store (a file in
// the test's folders) and, unless a test fakes them, a runtime and a
// self-test that refuse: a unit test never starts claude.
func unitFactory(stderr io.Writer) factory {
	f := realFactory(stderr)
	f.NewRuntime = func(context.Context, harness.Options) (stepRunner, error) {
		return nil, errors.New("test: NewRuntime is not faked (a unit test starts no claude)")
	}
	f.SelfTest = func(context.Context, string, string) error {
		return errors.New("test: SelfTest is not faked (a unit test starts no claude)")
	}
	f.SandboxCheck = func() error { return nil } // no bwrap probe in the unit loop
	return f
}
