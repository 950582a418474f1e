package glance

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Two more differentials against real bash, for what the argv comparison
// cannot see: where a here-document ends (the lines after it are commands
// the parser may never have shown the classifier) and what the fd table
// does to a file (a descriptor reopened for writing truncates it).
//
// Both run generated commands whole in bash. They are safe by
// construction: the generators only join fixed pieces (cat, echo, true,
// redirections to a file named victim in a fresh temporary folder, to
// /dev/null and to the descriptors' own /dev and /proc names), bash starts
// with env -i in that folder, and PATH holds one folder with only cat.

// needBash skips (or fails under FLOWER_REQUIRE_CLAUDE=1) without bash.
func needBash(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/bin/bash"); err != nil {
		if os.Getenv("FLOWER_REQUIRE_CLAUDE") == "1" {
			t.Fatal("no /bin/bash for the differential test [FLOWER_REQUIRE_CLAUDE=1: not skipping]")
		}
		t.Skip("SKIPPING: no /bin/bash for the differential test")
	}
}

// catOnlyPath is a PATH folder holding only cat.
func catOnlyPath(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "bin")
	if err := os.Mkdir(bin, 0o700); err != nil {
		t.Fatal(err)
	}
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cat, filepath.Join(bin, "cat")); err != nil {
		t.Fatal(err)
	}
	return bin
}

// runBash runs script (a generated command) in dir with env -i.
func runBash(t *testing.T, dir, path, script string) (stdout string) {
	cmd := exec.Command("/usr/bin/env", "-i", "PATH="+path, "HOME="+dir, "/bin/bash", "--norc", "--noprofile", "-c", script)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &out
	_ = cmd.Run() // a command that fails still shows what bash ran
	return out.String()
}

var (
	hdocDelims = []string{"EOF", "'EOF'", `"EOF"`, `\EOF`, "-EOF", "-'EOF'", `E\OF`, `"E"OF`, "E$x", "$'EOF'"}
	hdocLines  = []string{"x", "EOF", "EO\\", "F", "echo hidden", "\\", "a\\\\", "\\$x", "$x", "$'q'", "\tEOF",
		" EOF", "EOF ", `"EOF"`, "'EOF'", `E\OF`, `\EOF`, "EOF\\", "tru\\", "e", "echo $'\\x41'", "`x`",
		// The delimiter joined by backslash-newline, as bash reads an
		// unquoted here-document.
		"EO\\\nF", "E\\\nO\\\nF", "\\\nEOF", "\tEO\\\nF", "EOF\\\n"}
)

// hereDocCommands generates cat <<DELIM … DELIM; echo AFTER commands.
func hereDocCommands(seed int64, n int) []string {
	r := rand.New(rand.NewSource(seed))
	out := make([]string, 0, n)
	for len(out) < n {
		d := hdocDelims[r.Intn(len(hdocDelims))]
		op := "<<"
		if strings.HasPrefix(d, "-") {
			op, d = "<<-", d[1:]
		}
		var b strings.Builder
		fmt.Fprintf(&b, "cat %s%s\n", op, d)
		for l := r.Intn(5); l > 0; l-- {
			b.WriteString(hdocLines[r.Intn(len(hdocLines))] + "\n")
		}
		b.WriteString("EOF\necho AFTER")
		out = append(out, b.String())
	}
	return out
}

// parsedHereDoc is what the parser makes of a generated command: the
// here-document's body as cat prints it and the statements after it.
func parsedHereDoc(cmd string) (body string, stmts int, ok bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil || len(f.Stmts) == 0 || len(f.Stmts[0].Redirs) != 1 {
		return "", 0, false
	}
	r := f.Stmts[0].Redirs[0]
	delim := cmd[r.Word.Pos().Offset():r.Word.End().Offset()]
	if r.Hdoc != nil && strings.ContainsAny(delim, `'"\`) {
		// A quoted delimiter: the body is literal text.
		for _, p := range r.Hdoc.Parts {
			l, isLit := p.(*syntax.Lit)
			if !isLit {
				return "", 0, false
			}
			body += l.Value
		}
	} else if r.Hdoc != nil {
		body, err = expand.Document(&expand.Config{Env: expand.ListEnviron()}, r.Hdoc)
		if err != nil {
			return "", 0, false
		}
	}
	return body, len(f.Stmts), true
}

// TestDifferentialHereDocs: every here-document the classifier accepts
// ends where bash ends it, with the body bash feeds (cat's output, then
// AFTER from the one command after it).
func TestDifferentialHereDocs(t *testing.T) {
	needBash(t)
	dir, path := t.TempDir(), catOnlyPath(t)
	cmds := hereDocCommands(32, 400)
	accepted, apart, apartRefused := 0, 0, 0
	for _, c := range cmds {
		body, stmts, parsed := parsedHereDoc(c)
		got := runBash(t, dir, path, c)
		agree := parsed && stmts == 2 && got == body+"AFTER\n"
		if !agree {
			apart++
		}
		if !IsEphemeral(c) {
			if !agree {
				apartRefused++
			}
			continue
		}
		accepted++
		if !agree {
			t.Errorf("%q accepted, but bash printed %q and the parser saw body %q and %d statements", c, got, body, stmts)
		}
	}
	if accepted < 80 || apartRefused == 0 {
		t.Fatalf("%d of %d accepted, %d read apart and refused: the generator tests too little", accepted, len(cmds), apartRefused)
	}
	t.Logf("%d here-documents: %d accepted and read as bash reads them; %d refused (%d of them read apart by the "+
		"parser or not modelled here: a parse error, a substitution)", len(cmds), accepted, len(cmds)-accepted, apart)
}

// commentPieces build the text of a comment: backslashes, quotes and the
// like, which bash ignores there.
var commentPieces = []string{"\\", "\\\\", "x", "'", `"`, "$'", "`", " ", "#", "\\ "}

// TestDifferentialComments: every accepted "echo a # COMMENT" + newline +
// "echo AFTER" is two commands to bash as to the parser (a comment ends at
// the newline; the parser joins a backslash-newline into it).
func TestDifferentialComments(t *testing.T) {
	needBash(t)
	dir, path := t.TempDir(), catOnlyPath(t)
	r := rand.New(rand.NewSource(32))
	accepted, apart := 0, 0
	const n = 200
	for i := 0; i < n; i++ {
		var b strings.Builder
		b.WriteString("echo a #")
		for p := r.Intn(4) + 1; p > 0; p-- {
			b.WriteString(commentPieces[r.Intn(len(commentPieces))])
		}
		c := b.String() + "\necho AFTER"
		got := runBash(t, dir, path, c)
		f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(c), "")
		agree := err == nil && len(f.Stmts) == 2 && got == "a\nAFTER\n"
		if !agree {
			apart++
		}
		if IsEphemeral(c) {
			accepted++
			if !agree {
				t.Errorf("%q accepted, but bash printed %q (parse error %v)", c, got, err)
			}
		}
	}
	if accepted < 50 || apart == 0 {
		t.Fatalf("%d of %d accepted, %d read apart: the generator tests too little", accepted, n, apart)
	}
	t.Logf("%d comments: %d accepted and read as bash reads them; %d read apart by the parser, all refused", n, accepted, apart)
}

var (
	stmtTails = []string{"", " # c", " # c\\", " #\\\\", " 'q'", ` "d\""`, " a\\\\", " \\#z", " $'\\x41'", " #'",
		" x#y", " {a,b}", " \\", " 'a\\'", " \"#\"", " $'#'", " `#`"}
	stmtSeps = []string{";", "\n", " ;\n", "\\\n", " && ", " | cat\n", "\n\n", ";#x\n", " # c\\\n"}
)

// TestDifferentialStatements: for generated lists of "echo M<i>" with
// comments, quotes and backslashes around them, every accepted one runs in
// bash exactly the echo commands the parser shows the classifier (the
// markers bash prints are those of the parser's echo words, in order).
func TestDifferentialStatements(t *testing.T) {
	needBash(t)
	dir, path := t.TempDir(), catOnlyPath(t)
	r := rand.New(rand.NewSource(32))
	accepted, apart := 0, 0
	const n = 300
	for i := 0; i < n; i++ {
		var b strings.Builder
		for s := 0; s < 3; s++ {
			fmt.Fprintf(&b, "echo M%d%s", s, stmtTails[r.Intn(len(stmtTails))])
			if s < 2 {
				b.WriteString(stmtSeps[r.Intn(len(stmtSeps))])
			}
		}
		c := b.String()
		got := markers(runBash(t, dir, path, c))
		want, parsed := parsedMarkers(c)
		agree := parsed && got == want
		if !agree {
			apart++
		}
		if IsEphemeral(c) {
			accepted++
			if !agree {
				t.Errorf("%q accepted: bash ran %q, the parser shows %q", c, got, want)
			}
		}
	}
	if accepted < 100 {
		t.Fatalf("%d of %d accepted: the generator tests too little", accepted, n)
	}
	t.Logf("%d lists: %d accepted, each running in bash the commands the parser shows; %d read apart, all refused", n, accepted, apart)
}

// markers lists the first word of each line bash printed: one echo
// command's marker each.
func markers(out string) string {
	var m []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			m = append(m, f[0])
		}
	}
	return strings.Join(m, " ")
}

// parsedMarkers lists the first argument of each echo command the parser
// sees (a command that swallowed the next line shows one marker for two).
func parsedMarkers(cmd string) (string, bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		return "", false
	}
	var m []string
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 1 {
			m = append(m, c.Args[1].Lit())
		}
		return true
	})
	return strings.Join(m, " "), true
}

var (
	fdRedirs = []string{"1<victim", "0<victim", "<victim", "2<victim", "3<victim", ">/dev/stdout", ">>/dev/stdout",
		"2>/dev/stderr", ">/dev/null", "1<&0", "2<&0", "1>&3", "2>&1", ">&2", "1>&2", "&>/dev/stdout",
		">/dev/fd/1", ">/proc/self/fd/1", "<<<x", ">|/dev/stdout", "2>>/dev/stderr", "</dev/null", "0<&3"}
	fdCommands = []string{"echo x", "cat", "true", "echo"}
	fdWrappers = []string{"%s", "( %s )", "{ %s; }", "for i in 1; do %s; done", "if true; then %s; fi", "%s | cat"}
)

// fdCommandsGen generates commands with redirections inside and around.
func fdCommandsGen(seed int64, n int) []string {
	r := rand.New(rand.NewSource(seed))
	redirs := func(max int) string {
		var b strings.Builder
		for k := r.Intn(max + 1); k > 0; k-- {
			b.WriteString(" " + fdRedirs[r.Intn(len(fdRedirs))])
		}
		return b.String()
	}
	out := make([]string, 0, n)
	for len(out) < n {
		inner := fdCommands[r.Intn(len(fdCommands))] + redirs(3)
		w := fdWrappers[r.Intn(len(fdWrappers))]
		cmd := fmt.Sprintf(w, inner)
		if w != "%s" && w != "%s | cat" {
			cmd += redirs(2)
		}
		out = append(out, cmd)
	}
	return out
}

// TestDifferentialFdTable: no command the classifier accepts changes the
// victim file when bash runs it; the generator also makes commands that
// do (1<victim >/dev/stdout), and each of those must be refused.
func TestDifferentialFdTable(t *testing.T) {
	needBash(t)
	path := catOnlyPath(t)
	const precious = "precious\n"
	cmds := fdCommandsGen(32, 700)
	// One bash per batch, each command in a subshell in its own folder
	// (descriptors 0, 1 and 2 stay those bash was given).
	root := t.TempDir()
	const batch = 100
	for i := 0; i < len(cmds); i += batch {
		var script strings.Builder
		for j := i; j < min(i+batch, len(cmds)); j++ {
			dir := filepath.Join(root, fmt.Sprint(j))
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "victim"), []byte(precious), 0o600); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&script, "( cd %s || exit 1\n%s\n)\n", shQuote(dir), cmds[j])
		}
		runBash(t, root, path, script.String())
	}
	accepted, wrote := 0, 0
	for i, c := range cmds {
		dir := filepath.Join(root, fmt.Sprint(i))
		got, err := os.ReadFile(filepath.Join(dir, "victim"))
		entries, _ := os.ReadDir(dir)
		changed := err != nil || string(got) != precious || len(entries) != 1
		if changed {
			wrote++
		}
		if IsEphemeral(c) {
			accepted++
			if changed {
				t.Errorf("%q accepted, but bash changed the folder (victim now %q, %d entries)", c, got, len(entries))
			}
		}
	}
	if accepted < 100 || wrote < 10 {
		t.Fatalf("%d of %d accepted, %d wrote: the generator tests too little", accepted, len(cmds), wrote)
	}
	t.Logf("%d fd commands run by bash: %d accepted, none wrote; %d changed the victim, all refused", len(cmds), accepted, wrote)
}
