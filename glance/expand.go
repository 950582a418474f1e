package glance

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Words are judged by what bash makes of them. expandWord turns one word of
// a simple command into the fields bash passes to the program, in bash's
// order: brace expansion (lists, sequences, nested, across quoted parts:
// {".","-delete"} is two fields), tilde expansion, parameter expansion of
// the variables the command itself set (a for list, a plain assignment),
// word splitting of those, and quote removal. mvdan.cc/sh's own expansion
// code does the work (syntax.SplitBraces, expand.BracesSeq, expand.Fields),
// with a Config that reaches neither the environment nor the filesystem:
// its Environ answers only the variables the command bound, and globbing
// is off (ReadDir2 nil). What it cannot know stays unknown:
//
//   - a parameter the command did not bind ($HOME, $1, ${x:-y}, "$@"): its
//     value comes from the environment;
//   - a field with an unquoted *, ? or [ (pathname expansion reads the
//     directory, and a file named -delete turns ["-"]delete into an
//     option), an extended glob, or a tilde prefix (HOME, passwd).
//
// An unknown field records the literal text every expansion of it starts
// with (prefix), whether it came from a glob only (so it cannot contain
// more "/" than its pattern), and whether it may stand for any number of
// fields (multi: unquoted parameters and globs).

// maxFields bounds one command's expansion: a brace sequence of thousands
// is no glance.
const maxFields = 512

// arg is one field of the argv bash builds.
type arg struct {
	v     string // the value, when known
	known bool
	// For unknown fields: the text every expansion starts with, whether
	// only pathname expansion (or a tilde) made it unknown, and whether it
	// may expand to zero or several fields.
	prefix string
	glob   bool
	multi  bool
	// tilde: the field starts with a home directory; prefix is the text
	// after "~" when the tilde is the current user's (~ or ~/…).
	tilde bool
}

// tildeArg is the unknown field of a word starting with a tilde.
func tildeArg(parts []syntax.WordPart) arg {
	a := arg{glob: true, tilde: true}
	if l, ok := parts[0].(*syntax.Lit); ok && (l.Value == "~" || strings.HasPrefix(l.Value, "~/")) {
		a.prefix = "~" + wordPrefix(append([]syntax.WordPart{&syntax.Lit{Value: l.Value[1:]}}, parts[1:]...))
	}
	return a
}

// bindings are the values the command gave its own variables for the
// simple command being checked: name → value.
type bindings map[string]string

// boundEnv is the expand.Environ of one check: it answers the bound
// variables and records any other lookup (which makes the field unknown).
type boundEnv struct {
	vars    bindings
	touched bool
}

func (e *boundEnv) Get(name string) expand.Variable {
	if v, ok := e.vars[name]; ok {
		return expand.Variable{Set: true, Kind: expand.String, Str: v}
	}
	switch name {
	case "IFS", "PWD":
		return expand.Variable{} // bash's default IFS; no PWD is needed without globbing
	}
	e.touched = true
	// A set value keeps expand from looking further (os/user for ~name).
	return expand.Variable{Set: true, Kind: expand.String, Str: "\x00"}
}

func (e *boundEnv) Each(func(string, expand.Variable) bool) {}

// plainLit reports whether a literal word part needs no expansion at all.
func plainLit(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\', '{', '~', '*', '?', '[':
			return false
		}
	}
	return true
}

// expandWord appends w's fields to out. ok is false when the word cannot
// be expanded (too many fields, a part no glance may hold).
func expandWord(w *syntax.Word, vars bindings, out []arg) ([]arg, bool) {
	if len(w.Parts) == 1 {
		if l, isLit := w.Parts[0].(*syntax.Lit); isLit && plainLit(l.Value) {
			return append(out, arg{v: l.Value, known: true}), true
		}
	}
	if v, ok := quotedOnly(w.Parts); ok {
		return append(out, arg{v: v, known: true}), true
	}
	if a, ok := globField(w, vars); ok {
		return append(out, a), true
	}
	if paramBeforeBrace(w) {
		return nil, false
	}
	word := *w
	split := syntax.SplitBraces(&word)
	if split && (!bracesAgree(&word) || !braceCloseAgrees(&word)) {
		return nil, false
	}
	params, unquoted := wordParams(w, vars)
	if params == paramUnknown {
		a := arg{prefix: wordPrefix(w.Parts), multi: unquoted || hasBrace(w) || globbed(w.Parts)}
		if unquoted {
			a.prefix = "" // split: only the first field would start with it
		}
		return append(out, a), true
	}
	if !split {
		return expandBraced(&word, vars, unquoted, out)
	}
	return expandBraces(&word, vars, unquoted, out)
}

// expandBraces expands each word brace expansion makes of word (apart from
// expandWord: its iterator closure would move expandWord's locals to the
// heap on every call).
func expandBraces(word *syntax.Word, vars bindings, unquoted bool, out []arg) ([]arg, bool) {
	n := 0
	for sub, err := range expand.BracesSeq(nil, word) {
		if err != nil || n > maxFields {
			return nil, false
		}
		n++
		var ok bool
		if out, ok = expandBraced(sub, vars, unquoted, out); !ok {
			return nil, false
		}
	}
	return out, true
}

// expandBraced expands one word after brace expansion.
func expandBraced(w *syntax.Word, vars bindings, unquotedParams bool, out []arg) ([]arg, bool) {
	w = dropEmptyLits(w)
	if len(w.Parts) == 0 {
		return out, true // bash removes an empty unquoted result: {,a} is "a"
	}
	if unquotedParams && (globbed(w.Parts) || tilded(w.Parts)) {
		// The value is split into fields first: only the first starts
		// with the word's prefix, the others could be anything.
		return append(out, arg{multi: true}), true
	}
	if globbed(w.Parts) || unquotedParams && globbyValues(w, vars) {
		return append(out, arg{v: patternText(w.Parts), prefix: wordPrefix(w.Parts), glob: true, multi: true}), true
	}
	if tilded(w.Parts) {
		return append(out, tildeArg(w.Parts)), true
	}
	env := &boundEnv{vars: vars}
	fields, err := expand.Fields(&expand.Config{Env: env}, w)
	if err != nil || len(out)+len(fields) > maxFields {
		return nil, false
	}
	if env.touched {
		return append(out, arg{prefix: wordPrefix(w.Parts), multi: unquotedParams}), true
	}
	for _, f := range fields {
		out = append(out, arg{v: f, known: true})
	}
	return out, true
}

const (
	paramNone = iota
	paramBound
	paramUnknown
)

// wordParams classifies the parameter expansions in w: none, only plain
// $x/${x} of bound variables, or anything else. unquoted reports a
// parameter outside double quotes (its value is split into fields).
func wordParams(w *syntax.Word, vars bindings) (kind int, unquoted bool) {
	kind = paramNone
	var visit func(parts []syntax.WordPart, quoted bool)
	visit = func(parts []syntax.WordPart, quoted bool) {
		for _, p := range parts {
			switch p := p.(type) {
			case *syntax.ParamExp:
				if !quoted {
					unquoted = true
				}
				_, bound := vars[p.Param.Value]
				if !bound || !plainParam(p) {
					kind = paramUnknown
				} else if kind == paramNone {
					kind = paramBound
				}
			case *syntax.DblQuoted:
				if p.Dollar {
					kind = paramUnknown // $"…" is translated through the locale
				}
				visit(p.Parts, true)
			case *syntax.ExtGlob:
				kind = paramUnknown
			case *syntax.CmdSubst, *syntax.ArithmExp, *syntax.ProcSubst:
				kind = paramUnknown // refused before; never evaluated here
			}
		}
	}
	visit(w.Parts, false)
	return kind, unquoted
}

// plainParam reports $x or ${x}: no operator, index, length or the like.
func plainParam(p *syntax.ParamExp) bool {
	return !p.Excl && !p.Length && !p.Width && !p.IsSet && p.Index == nil && p.Slice == nil &&
		p.Repl == nil && p.Names == 0 && p.Exp == nil && p.NestedParam == nil && p.Flags == nil
}

// globbyValues reports a bound variable expanded unquoted in w whose value
// holds a pattern character: bash globs the result of the expansion.
func globbyValues(w *syntax.Word, vars bindings) bool {
	for _, p := range w.Parts {
		if pe, ok := p.(*syntax.ParamExp); ok && strings.ContainsAny(vars[pe.Param.Value], "*?[") {
			return true
		}
	}
	return false
}

func hasBrace(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.IndexByte(l.Value, '{') >= 0 {
			return true
		}
	}
	return false
}

// globbed reports an unquoted *, ? or [ in the word's literal parts (a
// backslash quotes the next character). A "[" counts when a "]" follows
// anywhere in the word, quoted or not: bash's bracket expression spans
// quoted parts (go.["ms"] matches go.m and go.s).
func globbed(parts []syntax.WordPart) bool {
	open := false
	for _, p := range parts {
		var s string
		lit := false
		switch p := p.(type) {
		case *syntax.Lit:
			s, lit = p.Value, true
		case *syntax.SglQuoted:
			s = p.Value
		case *syntax.DblQuoted:
			s = "]" // any part may hold the closing bracket: assume it does
			if !open {
				continue
			}
		default:
			continue
		}
		for i := 0; i < len(s); i++ {
			c := s[i]
			if lit && c == '\\' {
				i++
				continue
			}
			switch {
			case lit && (c == '*' || c == '?'):
				return true
			case lit && c == '[':
				open = true
			case open && c == ']':
				return true
			}
		}
	}
	return false
}

// tilded reports a tilde bash would expand: at the start of the word, or
// after "=" or ":" in a word that looks like an assignment (bash expands
// those in arguments too: make DIR=~/x).
func tilded(parts []syntax.WordPart) bool {
	if len(parts) == 0 {
		return false
	}
	if l, ok := parts[0].(*syntax.Lit); ok && strings.HasPrefix(l.Value, "~") {
		return true
	}
	assign := false
	for i, p := range parts {
		l, ok := p.(*syntax.Lit)
		if !ok {
			continue
		}
		for j := 0; j < len(l.Value); j++ {
			c := l.Value[j]
			if c == '\\' {
				j++
				continue
			}
			if c == '=' && i == 0 {
				assign = true
			}
			if c == '~' && assign && (j > 0 && (l.Value[j-1] == '=' || l.Value[j-1] == ':')) {
				return true
			}
			if c == '~' && assign && j == 0 && i > 0 {
				return true // conservatively: a tilde right after a quoted part
			}
		}
	}
	return false
}

// wordPrefix is the literal text at the start of the word, up to the first
// character whose expansion is not known (a parameter, a pattern
// character, a brace, a tilde).
func wordPrefix(parts []syntax.WordPart) string {
	var b strings.Builder
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			for i := 0; i < len(p.Value); i++ {
				c := p.Value[i]
				switch c {
				case '\\':
					if i+1 < len(p.Value) {
						i++
						b.WriteByte(p.Value[i])
					}
					continue
				case '*', '?', '[', '{', '~':
					return b.String()
				}
				b.WriteByte(c)
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				return b.String()
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return b.String()
				}
				b.WriteString(unescape(l.Value, true))
			}
		default:
			return b.String()
		}
	}
	return b.String()
}

// expandArgs expands a simple command's words.
func expandArgs(words []*syntax.Word, vars bindings) ([]arg, bool) {
	out := make([]arg, 0, len(words)+2)
	for _, w := range words {
		var ok bool
		if out, ok = expandWord(w, vars, out); !ok {
			return nil, false
		}
	}
	return out, true
}

// patternText is the text of a word after quote removal, with its pattern
// characters kept (what pathname expansion will match against).
func patternText(parts []syntax.WordPart) string {
	var b strings.Builder
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(p.Value, false))
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(unescape(l.Value, true))
				} else {
					b.WriteByte('$')
				}
			}
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// dropEmptyLits removes the empty literals brace splitting leaves behind.
func dropEmptyLits(w *syntax.Word) *syntax.Word {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && l.Value == "" {
			parts := make([]syntax.WordPart, 0, len(w.Parts))
			for _, p := range w.Parts {
				if l, ok := p.(*syntax.Lit); !ok || l.Value != "" {
					parts = append(parts, p)
				}
			}
			return &syntax.Word{Parts: parts}
		}
	}
	return w
}

// paramBeforeBrace reports $name directly followed by a "{": bash expands
// braces first, so $x{1,2} is $x1 $x2, while the parser has already made
// $x a parameter. The two disagree; such a word is refused.
func paramBeforeBrace(w *syntax.Word) bool {
	for i := 0; i+1 < len(w.Parts); i++ {
		pe, ok := w.Parts[i].(*syntax.ParamExp)
		if !ok || !pe.Short {
			continue
		}
		if l, ok := w.Parts[i+1].(*syntax.Lit); ok && strings.HasPrefix(l.Value, "{") {
			return true
		}
	}
	return false
}

// bracesAgree reports whether every brace expression in w is one bash and
// mvdan.cc/sh expand alike (the differential test found the exceptions):
// no ".." outside a sequence's own endpoints. A letter sequence from an upper- to a
// lower-case letter (or back) runs through [ \ ] ^ _ `: bash then removes
// the generated backslash as quoting, mvdan.cc/sh keeps it.
func bracesAgree(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.Contains(l.Value, "..") {
			return false // bash reads ".." beside braces its own way: {a}{a,}..{b,c}}
		}
		br, isBr := p.(*syntax.BraceExp)
		if !isBr {
			continue
		}
		if br.Sequence {
			from, to := br.Elems[0].Lit(), br.Elems[1].Lit()
			if len(from) == 1 && len(to) == 1 && !isDigits(from) {
				lo, hi := min(from[0], to[0]), max(from[0], to[0])
				if lo <= '\\' && hi >= '\\' {
					return false
				}
			}
		}
		for _, e := range br.Elems {
			if !bracesAgree(e) {
				return false
			}
		}
	}
	return true
}

// braceCloseAgrees reports whether no "{" that stayed literal (mvdan.cc/sh
// closed it at the first "}": {a}) is followed by a comma, ".." or brace
// expansion. bash's brace_gobbler (braces.c) closes a brace only at a "}"
// after a top-level comma or "..", skipping the earlier ones, so {a}#,} is
// one expansion to bash ("a}#") and a literal to mvdan.cc/sh.
//
// It also refuses a literal "$" in such a word: bash expands braces before
// parameters, so {$,}0 is $0 (the shell's name) to bash and "$0" to the
// parser, which took the "$" for a plain character.
func braceCloseAgrees(w *syntax.Word) bool {
	open := false
	var walk func(parts []syntax.WordPart) bool
	walk = func(parts []syntax.WordPart) bool {
		for _, p := range parts {
			switch p := p.(type) {
			case *syntax.Lit:
				v := p.Value
				for i := 0; i < len(v); i++ {
					switch {
					case v[i] == '\\':
						i++
					case v[i] == '$':
						return false
					case v[i] == '{':
						open = true
					case open && (v[i] == ',' || v[i] == '.' && i+1 < len(v) && v[i+1] == '.'):
						return false
					}
				}
			case *syntax.BraceExp:
				if open {
					return false
				}
				for _, e := range p.Elems {
					if !walk(e.Parts) {
						return false
					}
				}
			}
		}
		return true
	}
	return walk(w.Parts)
}

// globKey marks a binding of a loop variable over a pattern.
const globKey = "\x00glob:"

// globField: a word that is exactly "$f" for a loop variable over a
// pattern is one match of it: unknown, with the pattern's prefix. Any
// other use of f ($f unquoted, "src/$f") stays an unbound parameter.
func globField(w *syntax.Word, vars bindings) (arg, bool) {
	if len(vars) == 0 || len(w.Parts) != 1 {
		return arg{}, false
	}
	dq, ok := w.Parts[0].(*syntax.DblQuoted)
	if !ok || dq.Dollar || len(dq.Parts) != 1 {
		return arg{}, false
	}
	pe, ok := dq.Parts[0].(*syntax.ParamExp)
	if !ok || !plainParam(pe) {
		return arg{}, false
	}
	b, ok := vars[globKey+pe.Param.Value]
	if !ok {
		return arg{}, false
	}
	prefix, pattern, _ := strings.Cut(b, "\x00")
	return arg{v: pattern, prefix: prefix, glob: true}, true
}

// quotedOnly is the fast path for a word of plain literals and plain
// quotes ('%s', "a b", x'y'): quote removal is its whole expansion.
func quotedOnly(parts []syntax.WordPart) (string, bool) {
	var b strings.Builder
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if !plainLit(p.Value) {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar || len(p.Parts) > 1 {
				return "", false
			}
			if len(p.Parts) == 1 {
				l, ok := p.Parts[0].(*syntax.Lit)
				if !ok || strings.IndexByte(l.Value, '\\') >= 0 {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}
