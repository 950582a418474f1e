package glance

import (
	"strings"
	"sync"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// MaxLen bounds the commands IsEphemeral looks at. A glance is a
// short command; anything longer is not worth the parse and is not a glance.
const MaxLen = 8 << 10

// parserPool reuses shell parsers: a parser carries buffers worth keeping
// between calls, and IsEphemeral runs once per Bash call and once per stored
// Bash result when a session is loaded.
var parserPool = sync.Pool{New: func() any {
	// Comments are kept to be checked (safeNodes): the parser joins a
	// backslash-newline inside a comment, bash ends the comment there.
	return syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true))
}}

// IsEphemeral reports whether cmd is an ephemeral command (a glance): one
// that only looks at the state of the machine (read-only git subcommands,
// directory and system information, process and container listings, file
// viewing, path lookup, text processing), so its result goes stale instead
// of becoming a fact of the session.
//
// The same function decides two things that must never drift apart: which
// Bash commands the delegate guard lets a main thread run itself (--glance),
// and which Bash results the session store expires on load. A command the
// coordinator may run must be one whose result expires, and vice versa.
//
// The command is parsed with a real shell parser (bash dialect). It is
// ephemeral only if every simple command in every list, pipeline, subshell,
// block, if and for body is an allowed verb whose every option is on that
// verb's list (matched exactly) and whose operands have a read form's shape
// (see the package documentation), and nothing around them can change state: no
// command or process substitution, no arithmetic, no function or variable
// declarations, no background jobs, no redirection except to /dev/null,
// /dev/stdout, /dev/stderr or between descriptors, and no prefix assignment
// except a few harmless locale/colour variables. Anything the parser
// rejects is not ephemeral. When in doubt the answer is false: a false
// negative costs a subagent, a false positive lets a main thread write.
func IsEphemeral(cmd string) bool {
	return classify(cmd, nil)
}

// classify is IsEphemeral with a trace of every simple command's argv (nil
// in production; the differential test compares the trace with bash).
func classify(cmd string, trace func(c *syntax.CallExpr, vars bindings, argv []arg)) bool {
	if strings.TrimSpace(cmd) == "" || len(cmd) > MaxLen {
		return false
	}
	loadTables()
	if hasControl(cmd) || trailingBackslash(cmd) || rejectFirstWord(cmd) {
		return false
	}
	p := parserPool.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(cmd), "")
	parserPool.Put(p)
	if err != nil || len(f.Stmts) == 0 {
		return false
	}
	if !safeNodes(f) {
		return false
	}
	k := checker{trace: trace, src: cmd}
	return k.stmts(f.Stmts)
}

// hasControl reports control characters other than tab and newline. The
// parser and bash disagree on some of them (a form feed separates words for
// one and not the other), and a disagreement is a way around the check.
func hasControl(cmd string) bool {
	for i := 0; i < len(cmd); i++ {
		if c := cmd[i]; c < 0x20 && c != '\t' && c != '\n' || c == 0x7f {
			return true
		}
	}
	return false
}

// trailingBackslash reports a command ending in an unescaped backslash:
// bash joins it with whatever the caller appends after the command (a
// newline and more), the parser reads a literal backslash.
func trailingBackslash(cmd string) bool {
	n := 0
	for i := len(cmd) - 1; i >= 0 && cmd[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// shellKeywords may start a command without being a verb.
const shellKeywords = "if then else elif fi for while until do done case esac select function time coproc in"

// rejectFirstWord is a fast path that skips the parser for the common
// non-glance: a command whose first word is a plain unquoted word (no
// quoting, expansion, "=", "/" or keyword) that is not a whitelisted verb.
// The parser would find the same first simple command and reject it, so
// this never changes the answer; it only avoids the parse.
func rejectFirstWord(cmd string) bool {
	i := 0
	for i < len(cmd) && (cmd[i] == ' ' || cmd[i] == '\t') {
		i++
	}
	j := i
	for j < len(cmd) {
		c := cmd[j]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '+' {
			j++
			continue
		}
		break
	}
	if j == i || (j < len(cmd) && strings.IndexByte(" \t\n;|&)", cmd[j]) < 0) {
		return false
	}
	w := cmd[i:j]
	_, ok := verbs[w]
	return !ok && !inSet(shellKeywords, w)
}

// safeNodes rejects, anywhere in the tree, the constructs that run or
// change something whatever command they sit in, and decodes each $'…' in
// place (decodeQuote).
func safeNodes(f *syntax.File) bool {
	ok := true
	syntax.Walk(f, func(n syntax.Node) bool {
		if !ok {
			return false
		}
		switch n := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp, *syntax.ArithmCmd,
			*syntax.FuncDecl, *syntax.CoprocClause, *syntax.DeclClause, *syntax.LetClause,
			*syntax.TestDecl, *syntax.WhileClause, *syntax.CStyleLoop, *syntax.ArrayExpr:
			ok = false
		case *syntax.ParamExp:
			ok = safeParam(n)
		case *syntax.SglQuoted, *syntax.DblQuoted:
			ok = decodeQuote(n)
		case *syntax.Comment:
			// "ls # x\" + newline + "rm y": bash runs rm, the parser
			// reads it as more comment.
			ok = !strings.Contains(n.Text, "\n")
		}
		return ok
	})
	return ok
}

// safeParam accepts plain, length, default and pattern expansions. It
// rejects assigning expansions (${a:=b}), indirection and subscripts (bash
// evaluates a[...] as arithmetic, which can run command substitutions held
// in a variable), slices (arithmetic again) and @ transformations (${a@P}
// performs prompt expansion, which can run commands).
func safeParam(p *syntax.ParamExp) bool {
	if p.Excl || p.Index != nil || p.Slice != nil || p.Names != 0 || p.NestedParam != nil || p.Flags != nil {
		return false
	}
	if p.Exp != nil {
		switch p.Exp.Op {
		case syntax.AssignUnset, syntax.AssignUnsetOrNull, syntax.OtherParamOps:
			return false
		}
	}
	return true
}

// checker walks one command. vars holds what the command itself bound so
// far: a for variable (each value of its list) or a plain assignment; a
// name that is absent is unknown (it comes from the environment). trace,
// when set (tests only), sees every simple command's argv as the checker
// built it: the differential test compares it with what bash builds.
type checker struct {
	vars map[string][]string
	// globs: loop variables over one pattern (for f in *.go): each value is
	// one match, known only as the pattern's prefix.
	globs map[string]arg
	trace func(c *syntax.CallExpr, vars bindings, argv []arg)
	// src is the command's text (here-document checks read it).
	src string
	// fileFds counts the enclosing statements that redirect a descriptor
	// from or to a file: inside them no descriptor may be reopened.
	fileFds int
}

func (k *checker) stmts(stmts []*syntax.Stmt) bool {
	for _, s := range stmts {
		if !k.stmt(s) {
			return false
		}
	}
	return true
}

func (k *checker) stmt(s *syntax.Stmt) bool {
	if s == nil {
		return true
	}
	if s.Background || s.Coprocess || s.Disown {
		return false
	}
	file := false
	for _, r := range s.Redirs {
		if !safeRedirect(r) || !hereDocOK(r, k.src) {
			return false
		}
		file = file || redirectsFile(r)
	}
	if file || k.fileFds > 0 {
		for _, r := range s.Redirs {
			if reopensFd(r) {
				return false
			}
		}
	}
	if file {
		k.fileFds++
		defer func() { k.fileFds-- }()
	}
	return k.command(s.Cmd)
}

// The fd table. Opening /dev/stdout, /dev/stderr (or /dev/fd/N,
// /proc/self/fd/N, which no redirection may name) opens whatever the
// descriptor refers to again, with O_TRUNC for ">": after 1<victim (or
// 0<victim 1<&0, or a block's redirection around it) that is the file. So
// within a statement that redirects a descriptor from or to a file, and
// within everything such a statement encloses, no descriptor is reopened;
// and a file is only ever read onto descriptor 0 (safeRedirect).

// redirectsFile reports a redirection that points a descriptor at a file:
// input from anything but /dev/null, a here-document (a pipe or a
// temporary file), or a copy of a descriptor other than 1 and 2 (standard
// input, or 3 and up, which the command did not open and cannot know).
func redirectsFile(r *syntax.Redirect) bool {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return true
	case syntax.DplIn, syntax.DplOut:
		t, known := redirectTarget(r.Word)
		return !known || t != "1" && t != "2" && t != "-"
	case syntax.RdrIn:
		t, known := redirectTarget(r.Word)
		return !known || t != "/dev/null"
	}
	return false
}

// reopensFd reports an output redirection to /dev/stdout or /dev/stderr.
func reopensFd(r *syntax.Redirect) bool {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll:
		t, known := redirectTarget(r.Word)
		return !known || t != "/dev/null"
	}
	return false
}

// nested walks statements that may run zero or more times (a branch, a
// loop body, one side of && or |): whatever they assign is unknown after.
func (k *checker) nested(stmts ...*syntax.Stmt) bool {
	for _, s := range stmts {
		k.forget(s)
	}
	ok := k.stmts(stmts)
	for _, s := range stmts {
		k.forget(s)
	}
	return ok
}

// forget drops the variables n assigns (or loops over) from the scope.
func (k *checker) forget(n syntax.Node) {
	if n == nil || len(k.vars) == 0 && len(k.globs) == 0 {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Assign:
			if n.Name != nil {
				delete(k.vars, n.Name.Value)
				delete(k.globs, n.Name.Value)
			}
		case *syntax.ForClause:
			if wi, ok := n.Loop.(*syntax.WordIter); ok {
				delete(k.vars, wi.Name.Value)
				delete(k.globs, wi.Name.Value)
			}
		}
		return true
	})
}

func (k *checker) command(c syntax.Command) bool {
	switch c := c.(type) {
	case *syntax.CallExpr:
		return k.call(c)
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			return k.nested(c.X) && k.nested(c.Y)
		}
		return k.stmt(c.X) && k.nested(c.Y)
	case *syntax.Subshell:
		return k.nested(c.Stmts...)
	case *syntax.Block:
		return k.stmts(c.Stmts)
	case *syntax.IfClause:
		for ic := c; ic != nil; ic = ic.Else {
			if !k.nested(ic.Cond...) || !k.nested(ic.Then...) {
				return false
			}
		}
		return true
	case *syntax.ForClause:
		return k.forLoop(c)
	case *syntax.CaseClause:
		for _, item := range c.Items {
			if !k.nested(item.Stmts...) {
				return false
			}
		}
		return true
	case *syntax.TestClause:
		return safeTest(c)
	case *syntax.TimeClause:
		return k.stmt(c.Stmt)
	}
	return false
}

// forLoop checks a for-in loop: its variable must be one a program cannot
// read (shellVarOK) and takes each field of the list in the body.
func (k *checker) forLoop(c *syntax.ForClause) bool {
	wi, ok := c.Loop.(*syntax.WordIter)
	if !ok || c.Select || !shellVarOK(wi.Name.Value) {
		return false
	}
	name := wi.Name.Value
	list, ok := expandArgs(wi.Items, nil)
	if !ok || !wi.InPos.IsValid() {
		return false // "for x; do" loops over the positional parameters
	}
	var values []string
	for _, a := range list {
		if !a.known || namesDevice(a.v) {
			values = nil
			break
		}
		values = append(values, a.v)
	}
	for _, s := range c.Do {
		k.forget(s)
	}
	delete(k.vars, name)
	delete(k.globs, name)
	if values != nil {
		k.bind(name, values)
	} else if len(list) == 1 && list[0].glob && !list[0].tilde && pathOK(list[0], false) {
		if k.globs == nil {
			k.globs = map[string]arg{}
		}
		k.globs[name] = list[0]
	}
	ok = k.stmts(c.Do)
	k.forget(c)
	return ok
}

func (k *checker) bind(name string, values []string) {
	if k.vars == nil {
		k.vars = map[string][]string{}
	}
	k.vars[name] = values
}

// safeTest rejects [[ … ]] arithmetic comparisons (-eq, -lt, …) on
// operands that are not plain literals: bash evaluates those operands as
// arithmetic, and a variable holding "a[$(cmd)]" would run cmd. It also
// rejects -v and -R, which evaluate an array subscript.
func safeTest(c *syntax.TestClause) bool {
	ok := true
	syntax.Walk(c, func(n syntax.Node) bool {
		if u, isUn := n.(*syntax.UnaryTest); isUn && (u.Op == syntax.TsVarSet || u.Op == syntax.TsRefVar) {
			ok = false
		}
		b, isBin := n.(*syntax.BinaryTest)
		if !ok || !isBin {
			return ok
		}
		switch b.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			for _, x := range []syntax.TestExpr{b.X, b.Y} {
				w, isWord := x.(*syntax.Word)
				if !isWord {
					ok = false
					break
				}
				if v, known := wordLit(w); !known || !isDigits(strings.TrimPrefix(v, "-")) {
					ok = false
				}
			}
		}
		return ok
	})
	return ok
}

// safeSinks are the only files an output redirection may name.
const safeSinks = "/dev/null /dev/stdout /dev/stderr"

func safeRedirect(r *syntax.Redirect) bool {
	if r.N != nil && !isDigits(r.N.Value) {
		return false // {fd}> assigns a variable
	}
	switch r.Op {
	case syntax.RdrIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		if r.N != nil && r.N.Value != "0" {
			return false // input onto 1, 2 or 3…: a file where output is expected
		}
	}
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		// The body was walked for substitutions; the command it feeds must
		// itself be a whitelisted reader, so a heredoc cannot feed a writer.
		return true
	}
	target, known := redirectTarget(r.Word)
	if !known {
		return false
	}
	switch r.Op {
	case syntax.DplOut, syntax.DplIn:
		return isDigits(target) || target == "-"
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll:
		return inSet(safeSinks, target)
	case syntax.RdrIn:
		return target == "/dev/null" || workspaceFile(target)
	}
	return false
}

// redirectTarget expands a redirection's word: it must be one known field
// (bash refuses a word that expands to several as ambiguous).
func redirectTarget(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
	fields, ok := expandWord(w, nil, nil)
	if !ok || len(fields) != 1 || !fields[0].known {
		return "", false
	}
	return fields[0].v, true
}

// workspaceFile reports a relative path that stays in the workspace: not
// absolute, no ".." component, not an option-looking name.
func workspaceFile(p string) bool {
	if p == "" || p[0] == '/' || p[0] == '-' {
		return false
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return false
		}
	}
	return true
}

// safeAssign: the variables a prefix assignment may set: they change
// formatting only. PAGER-like variables name programs and are accepted only
// with the value "cat".
func safeAssign(name string) (want string, listed bool) {
	switch name {
	case "LANG", "LC_ALL", "LC_MESSAGES", "LC_COLLATE", "LC_CTYPE", "TZ", "NO_COLOR", "COLUMNS", "TERM", "CLICOLOR":
		return "*", true
	case "GIT_PAGER", "PAGER":
		return "cat", true
	}
	return "", false
}

// noBindings is the one empty binding of a command that bound nothing
// (shared, never written).
var noBindings = []bindings{nil}

// maxCombos bounds the bindings one simple command is checked under (the
// product of the values of the loop variables it names).
const maxCombos = 64

// call checks one simple command under every combination of the values
// of the bound variables its words name.
func (k *checker) call(c *syntax.CallExpr) bool {
	if len(c.Args) == 0 {
		return k.assign(c.Assigns)
	}
	for _, a := range c.Assigns {
		if !prefixAssignOK(a) {
			return false
		}
	}
	combos, ok := k.combinations(c.Args)
	if !ok {
		return false
	}
	for _, b := range combos {
		b = k.withGlobs(b)
		argv, ok := expandArgs(c.Args, b)
		if k.trace != nil && ok {
			k.trace(c, b, argv)
		}
		if !ok || !checkArgv(argv) {
			return false
		}
	}
	for _, a := range c.Assigns {
		delete(k.vars, a.Name.Value)
		delete(k.globs, a.Name.Value)
	}
	return true
}

// withGlobs adds the pattern-bound loop variables to a binding, under
// globKey: expandWord gives "$f" for them as one unknown field of the
// pattern (prefix and pattern text, NUL-separated).
func (k *checker) withGlobs(b bindings) bindings {
	if len(k.globs) == 0 {
		return b
	}
	nb := bindings{}
	for n, v := range b {
		nb[n] = v
	}
	for n, a := range k.globs {
		nb[globKey+n] = a.prefix + "\x00" + a.v
	}
	return nb
}

// combinations lists the bindings of the bound variables the words name:
// one empty binding when they name none.
func (k *checker) combinations(words []*syntax.Word) ([]bindings, bool) {
	if len(k.vars) == 0 {
		return noBindings, true
	}
	combos := []bindings{nil}
	seen := map[string]bool{}
	for _, w := range words {
		ok := true
		syntax.Walk(w, func(n syntax.Node) bool {
			pe, isPE := n.(*syntax.ParamExp)
			if !isPE || !ok {
				return ok
			}
			name := pe.Param.Value
			values, bound := k.vars[name]
			if !bound || seen[name] {
				return true
			}
			seen[name] = true
			if len(combos)*len(values) > maxCombos {
				ok = false
				return false
			}
			next := make([]bindings, 0, len(combos)*len(values))
			for _, b := range combos {
				for _, v := range values {
					nb := bindings{name: v}
					for n, x := range b {
						nb[n] = x
					}
					next = append(next, nb)
				}
			}
			combos = next
			return true
		})
		if !ok {
			return nil, false
		}
	}
	return combos, true
}

// assign handles a bare assignment (x=1): it sets shell state, so only a
// variable no program reads may be assigned (shellVarOK). Its value is
// bound when it is known.
func (k *checker) assign(assigns []*syntax.Assign) bool {
	for _, a := range assigns {
		if a.Append || a.Naked || a.Index != nil || a.Array != nil || a.Name == nil || !shellVarOK(a.Name.Value) {
			return false
		}
		name := a.Name.Value
		v, known, ok := assignValue(a.Value)
		if !ok {
			return false
		}
		delete(k.vars, name)
		delete(k.globs, name)
		if known && !namesDevice(v) {
			k.bind(name, []string{v})
		}
	}
	return true
}

// assignValue expands an assignment's value as bash does (no brace
// expansion, no globbing, no splitting; tilde after "=" and ":").
func assignValue(w *syntax.Word) (v string, known, ok bool) {
	if w == nil {
		return "", true, true
	}
	if kind, _ := wordParams(w, nil); kind != paramNone || tildedValue(w.Parts) {
		return "", false, true
	}
	env := &boundEnv{}
	v, err := expand.Literal(&expand.Config{Env: env}, w)
	if err != nil {
		return "", false, false
	}
	return v, !env.touched, true
}

// tildedValue reports an unquoted tilde at the start of an assignment's
// value or after an unquoted ":".
func tildedValue(parts []syntax.WordPart) bool {
	for i, p := range parts {
		l, ok := p.(*syntax.Lit)
		if !ok {
			continue
		}
		for j := 0; j < len(l.Value); j++ {
			if l.Value[j] == '~' && (i == 0 && j == 0 || j > 0 && l.Value[j-1] == ':') {
				return true
			}
		}
	}
	return false
}

// prefixAssignOK accepts a prefix assignment (X=v cmd), which the program
// sees in its environment: a formatting variable from safeAssign with a
// known value, or a variable no program reads.
func prefixAssignOK(a *syntax.Assign) bool {
	if a.Append || a.Naked || a.Index != nil || a.Array != nil || a.Name == nil {
		return false
	}
	v, known, ok := assignValue(a.Value)
	if !ok || !known {
		return false
	}
	if shellVarOK(a.Name.Value) {
		return true
	}
	want, listed := safeAssign(a.Name.Value)
	if !listed || want != "*" && v != want {
		return false
	}
	// A locale value with a "/" names a locale file to load.
	return !strings.ContainsAny(v, "/")
}

// checkArgv judges one simple command's argv.
func checkArgv(argv []arg) bool {
	if len(argv) == 0 {
		return false
	}
	verb, ok := verbName(argv[0])
	if !ok {
		return false
	}
	v, ok := verbs[verb]
	if !ok {
		return false
	}
	return v.accepts(argv[1:])
}

// trustedBinDirs are the directories from which an absolute verb path is
// accepted (/usr/bin/git is git; ./git is whatever sits in the workspace).
const trustedBinDirs = "/bin /usr/bin /usr/local/bin /sbin /usr/sbin"

func verbName(a arg) (string, bool) {
	if !a.known || a.v == "" {
		return "", false
	}
	i := strings.LastIndexByte(a.v, '/')
	if i < 0 {
		return a.v, true
	}
	if !inSet(trustedBinDirs, a.v[:i]) {
		return "", false
	}
	return a.v[i+1:], true
}

// wordLit returns the literal value of w after quote removal and whether it
// is fully known before the shell expands it.
func wordLit(w *syntax.Word) (string, bool) {
	var b strings.Builder
	known := true
	for i, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if expands(p.Value, i == 0) {
				known = false
			}
			b.WriteString(unescape(p.Value, false))
		case *syntax.SglQuoted:
			if p.Dollar {
				known = false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				known = false
			}
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(unescape(l.Value, true))
				} else {
					known = false
				}
			}
		default:
			known = false
		}
	}
	return b.String(), known
}

// expands reports whether an unquoted literal is subject to pathname
// expansion (*, ?, [...]), brace expansion ({a,b}, {1..3}) or, at the
// start of a word, tilde expansion: its final value is not what it reads.
func expands(lit string, first bool) bool {
	if strings.ContainsAny(lit, "*?") || (first && strings.HasPrefix(lit, "~")) {
		return true
	}
	if i := strings.IndexByte(lit, '['); i >= 0 && strings.IndexByte(lit[i:], ']') > 0 {
		return true
	}
	if i := strings.IndexByte(lit, '{'); i >= 0 {
		rest := lit[i:]
		return strings.Contains(rest, ",") || strings.Contains(rest, "..")
	}
	return false
}

// unescape removes shell backslash quoting: outside quotes every backslash
// quotes the next character; inside double quotes only $ ` " \ and newline.
func unescape(s string, dquoted bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		n := s[i+1]
		switch {
		case n == '\n':
			i++
		case !dquoted || strings.IndexByte("$`\"\\", n) >= 0:
			b.WriteByte(n)
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
