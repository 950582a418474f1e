package glance

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// The differential test: for every command the classifier accepts, the argv
// it believes each simple command gets is compared with the argv bash
// really builds. bash runs `set -- WORDS; printf '%s\0' "$@"` (after the
// command's own bindings, for loop variables) in an empty folder holding
// files named like options (-delete, -o, -i), with env -i, a temporary HOME
// and PATH=/usr/bin:/bin. Every command handed to bash was accepted, and an
// accepted command holds no command, process or arithmetic substitution
// (asserted before the script is written), so the words cannot run
// anything: set and printf are builtins.

// oracleCall is one simple command of an accepted command.
type oracleCall struct {
	cmd    string
	script string // bindings; set -- WORDS
	argv   []arg
}

// tracedCalls classifies cmd and returns its simple commands with the argv
// the classifier built for each, if it accepted cmd.
func tracedCalls(t testing.TB, cmd string) ([]oracleCall, bool) {
	var calls []oracleCall
	ok := classify(cmd, func(c *syntax.CallExpr, vars bindings, argv []arg) {
		var b strings.Builder
		names := make([]string, 0, len(vars))
		for n := range vars {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if g, isGlob := strings.CutPrefix(n, globKey); isGlob {
				// One iteration of "for g in PATTERN": its first match.
				_, pattern, _ := strings.Cut(vars[n], "\x00")
				fmt.Fprintf(&b, "set -- %s; %s=$1; ", globSource(pattern), g)
				continue
			}
			fmt.Fprintf(&b, "%s=%s; ", n, shQuote(vars[n]))
		}
		b.WriteString("set --")
		for _, w := range c.Args {
			b.WriteString(" ")
			b.WriteString(cmd[w.Pos().Offset():w.End().Offset()])
		}
		calls = append(calls, oracleCall{cmd: cmd, script: b.String(), argv: append([]arg{}, argv...)})
	})
	if !ok {
		return nil, false
	}
	assertNoSubstitution(t, cmd)
	return calls, true
}

// assertNoSubstitution fails the test before bash sees a command that could
// run something while its words are expanded.
func assertNoSubstitution(t testing.TB, cmd string) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		t.Fatalf("accepted %q does not parse: %v", cmd, err)
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp, *syntax.ArithmCmd:
			t.Fatalf("accepted %q holds a substitution: it must never reach bash", cmd)
		}
		return true
	})
}

// globSource writes a pattern back as shell text: its pattern characters
// bare, everything else quoted.
func globSource(pattern string) string {
	var b strings.Builder
	for _, c := range pattern {
		if strings.ContainsRune("*?[]", c) {
			b.WriteRune(c)
		} else {
			b.WriteString(shQuote(string(c)))
		}
	}
	return b.String()
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// oracleDir is the empty folder bash expands in, with files named like
// options, and a temporary HOME.
func oracleDir(t testing.TB) (dir, home string) {
	dir = t.TempDir()
	for _, n := range []string{"-delete", "-o", "-i"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	home = filepath.Join(t.TempDir(), "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir, home
}

const oracleEnd = "\x01end\x01"

// bashArgv runs the calls' scripts in one bash and returns each one's argv.
func bashArgv(t testing.TB, dir, home string, calls []oracleCall) ([][]string, error) {
	var script strings.Builder
	for _, c := range calls {
		// A subshell each: one call's bindings never reach the next.
		fmt.Fprintf(&script, "( %s\nprintf '%%s\\0' \"$@\" ); printf '%%s\\0' %s\n", c.script, shQuote(oracleEnd))
	}
	cmd := exec.Command("/usr/bin/env", "-i", "HOME="+home, "PATH=/usr/bin:/bin",
		"/bin/bash", "--norc", "--noprofile", "-c", script.String())
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("bash: %v: %s", err, errb.String())
	}
	fields := strings.Split(strings.TrimSuffix(out.String(), "\x00"), "\x00")
	var res [][]string
	cur := []string{}
	for _, f := range fields {
		if f == oracleEnd {
			res = append(res, cur)
			cur = []string{}
			continue
		}
		cur = append(cur, f)
	}
	if len(res) != len(calls) {
		return nil, fmt.Errorf("bash gave %d argvs for %d calls (stderr %q)", len(res), len(calls), errb.String())
	}
	return res, nil
}

// argvMatches reports whether bash's fields fit the classifier's argv: a
// known field must be equal, an unknown one stands for one field (or any
// number when multi) that starts with its prefix.
func argvMatches(want []arg, got []string) bool {
	// fit[i][j]: want[i:] matches got[j:].
	fit := make([][]bool, len(want)+1)
	for i := range fit {
		fit[i] = make([]bool, len(got)+1)
	}
	fit[len(want)][len(got)] = true
	for i := len(want) - 1; i >= 0; i-- {
		a := want[i]
		fits := func(s string) bool {
			if a.known {
				return s == a.v
			}
			return a.tilde || strings.HasPrefix(s, a.prefix)
		}
		for j := len(got); j >= 0; j-- {
			one := j < len(got) && fits(got[j]) && fit[i+1][j+1]
			if !a.multi || a.known {
				fit[i][j] = one
				continue
			}
			// multi: zero fields, or one more field and still multi.
			fit[i][j] = fit[i+1][j] || j < len(got) && fits(got[j]) && fit[i][j+1]
		}
	}
	return fit[0][0]
}

func showArgv(argv []arg) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		switch {
		case a.known:
			parts[i] = fmt.Sprintf("%q", a.v)
		case a.multi:
			parts[i] = fmt.Sprintf("<%q…*>", a.prefix)
		default:
			parts[i] = fmt.Sprintf("<%q…>", a.prefix)
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// differential checks every accepted command of cmds against bash and
// returns how many simple commands it compared.
func differential(t *testing.T, cmds []string) int {
	t.Helper()
	if _, err := os.Stat("/bin/bash"); err != nil {
		if os.Getenv("FLOWER_REQUIRE_CLAUDE") == "1" {
			t.Fatal("no /bin/bash for the differential test [FLOWER_REQUIRE_CLAUDE=1: not skipping]")
		}
		t.Skip("SKIPPING: no /bin/bash for the differential test")
	}
	dir, home := oracleDir(t)
	var calls []oracleCall
	for _, c := range cmds {
		cs, ok := tracedCalls(t, c)
		if ok {
			calls = append(calls, cs...)
		}
	}
	const batch = 200
	for i := 0; i < len(calls); i += batch {
		part := calls[i:min(i+batch, len(calls))]
		got, err := bashArgv(t, dir, home, part)
		if err != nil {
			// Find the call bash could not take, one by one.
			for _, c := range part {
				if _, err := bashArgv(t, dir, home, []oracleCall{c}); err != nil {
					t.Errorf("%q: bash refused its words (%s): %v", c.cmd, c.script, err)
				}
			}
			continue
		}
		for j, c := range part {
			if !argvMatches(c.argv, got[j]) {
				t.Errorf("%q: classifier argv %s, bash argv %q (script %s)", c.cmd, showArgv(c.argv), got[j], c.script)
			}
		}
	}
	return len(calls)
}

func TestDifferentialTables(t *testing.T) {
	n := differential(t, allCases())
	if n < 300 {
		t.Fatalf("only %d simple commands compared", n)
	}
	t.Logf("%d simple commands of the tables agree with bash", n)
}

// TestDifferentialControl shows the comparison can fail: a wrong argv for a
// brace list across quotes does not match what bash builds.
func TestDifferentialControl(t *testing.T) {
	dir, home := oracleDir(t)
	c := oracleCall{script: `set -- find {".","-delete"}`,
		argv: []arg{{v: "find", known: true}, {v: `{.,-delete}`, known: true}}}
	got, err := bashArgv(t, dir, home, []oracleCall{c})
	if err != nil {
		t.Fatal(err)
	}
	if argvMatches(c.argv, got[0]) {
		t.Fatalf("the word-level argv %s matched bash's %q", showArgv(c.argv), got[0])
	}
	calls, ok := tracedCalls(t, `find {".","-name"} x`)
	if !ok || len(calls) != 1 || !argvMatches(calls[0].argv, []string{"find", ".", "-name", "x"}) {
		t.Fatalf("classifier argv for a brace list: %v %v", ok, calls)
	}
	if !argvMatches([]arg{{prefix: "src/", glob: true, multi: true}}, nil) ||
		argvMatches([]arg{{prefix: "src/", glob: true}}, []string{"-delete"}) {
		t.Fatal("unknown fields: zero fields fit a multi glob; a field without its prefix does not fit")
	}
}

// fuzzPieces are the fragments the seeded generator builds words from:
// braces, commas, sequences, quotes of every kind, escapes, pattern
// characters, tildes, assignments-looking text and option-looking text.
var fuzzPieces = []string{
	"{", "}", ",", "..", "a", "b", "-", "-o", "-delete", "x", "1", "3", "01", "-2", "z", "A",
	`"`, `"a,b"`, `","`, `"{"`, `"}"`, `'-'`, `'{a,b}'`, `','`, `\,`, `\{`, `\}`, `\ `, `\\`,
	`$'\x2d'`, `$'a\tb'`, "*", "?", "[", "]", `["-"]`, "~", "~/", "=", ":", "a=~", "/", ".", "@", "%",
	"$x", "${x}", `"$x"`, "$HOME", `"$y"`, "#", "!", "^", "''", `""`,
	"{1..3}", "{a..c}", "{01..10}", "{-2..2}", "{1..10..3}", "{a..Z}", "{z..a..2}", "{1..2..0}", "{3..1}",
	"{99999999999999999999..1}", "{a,{b,c}}", "{,a}", "{a,}", `{"a",b}`, `{a,"b"}`, `{".","-delete"}`,
	"{a..c,d}", "{1..3..x}", "{a..1}", `{"1"..3}`, "{a,b}{1,2}", "{{a,b}", "{a,b}}", "{}", "{ }", "{a}",
	// ANSI-C quoting (round 4): escapes bash decodes, some the classifier
	// decodes and some it must refuse.
	`$'\x{2d}'`, `$'\101'`, `$'\1012'`, `$'\e'`, `$'\t'`, `$'\x41B'`, `$'\'x'`, `$'\\'`, `$'\u002d'`, `$'\cA'`,
	`$'\7'`, `$'\x7g'`, `$'a\?b'`, `$'\"'`, `$"x"`, `$'\055'`, `$'-\157'`, `$'\x2f'`, `$'{a,b}'`, `$'*'`, `$'\x2a'`,
}

// fuzzCommands generates n commands from fuzzPieces, seeded so a failure
// reproduces: mostly echo (which takes any word), the rest other verbs, in
// for loops binding x and y now and then.
func fuzzCommands(seed int64, n int) []string {
	r := rand.New(rand.NewSource(seed))
	verbs := []string{"echo", "echo", "echo", "ls", "cat", "grep -n", "sort", "find", "git log", "printf '%s\\n'", "wc -l"}
	out := make([]string, 0, n)
	for len(out) < n {
		var b strings.Builder
		b.WriteString(verbs[r.Intn(len(verbs))])
		for w := r.Intn(4) + 1; w > 0; w-- {
			b.WriteString(" ")
			for p := r.Intn(6) + 1; p > 0; p-- {
				b.WriteString(fuzzPieces[r.Intn(len(fuzzPieces))])
			}
		}
		cmd := b.String()
		switch r.Intn(4) {
		case 0:
			cmd = "for x in a '-o' 'b c' '*'; do " + cmd + "; done"
		case 1:
			cmd = "x=-i; y='p q'; " + cmd
		case 2:
			cmd = "for x in *; do for y in [-]*; do " + cmd + "; done; done"
		}
		out = append(out, cmd)
	}
	return out
}

func TestDifferentialFuzzCorpus(t *testing.T) {
	cmds := fuzzCommands(22, 4000)
	accepted := 0
	for _, c := range cmds {
		if IsEphemeral(c) {
			accepted++
		}
	}
	n := differential(t, cmds)
	if accepted < 1000 {
		t.Fatalf("only %d of %d generated commands accepted: the corpus tests too little", accepted, len(cmds))
	}
	t.Logf("%d generated commands accepted, %d simple commands agree with bash", accepted, n)
}

// FuzzDifferential: go test -fuzz FuzzDifferential ./glance runs the
// comparison on whatever the fuzzer finds accepted.
func FuzzDifferential(f *testing.F) {
	for _, c := range fuzzCommands(7, 20) {
		f.Add(c)
	}
	f.Add(`find {".","-name"} x`)
	f.Add(`echo {a,"b"}{1..3}`)
	// Round 4: ANSI-C words, here-documents and fd redirections.
	for _, c := range append(ansicWords()[:40], append(hereDocCommands(7, 20), fdCommandsGen(7, 20)...)...) {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		differential(t, []string{cmd})
	})
}

// ansicWords are $'…' words built from every escape letter and digit run
// bash knows, each followed by characters that could extend it.
func ansicWords() []string {
	var out []string
	tails := []string{"", "a", "7", "f", "{", "'x'"}
	escapes := []string{}
	for c := byte(0x21); c < 0x7f; c++ {
		if c != '\'' {
			escapes = append(escapes, string(c))
		}
	}
	escapes = append(escapes, "'", "x2", "x2d", "x41", "x7f", "x80", "x{2d}", "x{41}x", "1", "12", "101", "1011", "177",
		"200", "377", "400", "0", "01", "0101", "u41", "u{41}", "U41", "cA", "c-", "c?", "E[", "x", "xg", "e7")
	for _, e := range escapes {
		for _, t := range tails {
			out = append(out, "echo $'\\"+e+t+"'")
		}
	}
	return out
}

// TestDifferentialANSIC compares the classifier's decoding of $'…' with
// bash's, for every escape: each word the classifier accepts must be what
// bash passes; the rest are refused.
func TestDifferentialANSIC(t *testing.T) {
	cmds := ansicWords()
	accepted := 0
	for _, c := range cmds {
		if IsEphemeral(c) {
			accepted++
		}
	}
	n := differential(t, cmds)
	if accepted < 150 {
		t.Fatalf("only %d of %d ANSI-C words accepted: the test compares too little", accepted, len(cmds))
	}
	t.Logf("%d ANSI-C words, %d accepted, %d simple commands agree with bash", len(cmds), accepted, n)
}
