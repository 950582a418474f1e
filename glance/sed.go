package glance

import (
	"strings"
)

// sedOpts are GNU sed's options that neither edit in place (-i), read a
// script file (-f) nor follow symlinks for -i. -e takes the script.
var sedOpts = &optSet{specs: []string{"-nErsuz -e: -l: --quiet --silent --regexp-extended --separate --unbuffered --null-data " +
	"--posix --debug --sandbox --expression= --line-length=" + helpVersion}}

// sedRule accepts sed whose every option is listed and whose script (from
// -e/--expression, or else the first operand) passes sedScriptSafe.
func sedRule(args []arg) bool {
	if !allKnown(args) {
		return false
	}
	var scripts []string
	haveE := false
	var ops []arg
	for i := 0; i < len(args); i++ {
		a := args[i].v
		switch {
		case a == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case a == "-e" || a == "--expression":
			if i+1 >= len(args) {
				return false
			}
			scripts, haveE = append(scripts, args[i+1].v), true
			i++
		case len(a) > 13 && a[:13] == "--expression=":
			scripts, haveE = append(scripts, a[13:]), true
		case len(a) > 1 && a[0] == '-' && a[1] != '-':
			// A cluster: -ne 'script'; -escript glues the script.
			script, used, ok := sedCluster(a, args[i+1:])
			if !ok {
				return false
			}
			if script != nil {
				scripts, haveE = append(scripts, *script), true
			}
			i += used
		case len(a) > 1 && a[0] == '-':
			s := scanner{args: args[i+1:]}
			if !s.option(sedOpts, a) {
				return false
			}
			i += s.i
		default:
			ops = append(ops, args[i])
		}
	}
	if !haveE {
		if len(ops) == 0 {
			return false
		}
		scripts = append(scripts, ops[0].v)
	}
	// Each -e alone, and all of them joined by newlines as GNU sed joins
	// them (a fragment could end inside another's command).
	for _, s := range scripts {
		if !sedScriptSafe(s) {
			return false
		}
	}
	return len(scripts) < 2 || sedScriptSafe(strings.Join(scripts, "\n"))
}

// sedCluster reads one cluster of short options. It returns the -e script
// if the cluster has one, how many following words it used, and ok=false on
// an option not in sedOpts.
func sedCluster(w string, next []arg) (script *string, used int, ok bool) {
	for j := 1; j < len(w); j++ {
		c := w[j]
		if c == 'e' || c < 128 && sedOpts.tab().short[c] == value {
			v := w[j+1:]
			if v == "" {
				if len(next) == 0 {
					return nil, 0, false
				}
				v, used = next[0].v, 1
			}
			if c == 'e' {
				return &v, used, true
			}
			return nil, used, true
		}
		if c >= 128 || sedOpts.tab().short[c] != flag {
			return nil, 0, false
		}
	}
	return nil, 0, true
}

// sedScriptSafe parses a sed script the way GNU sed does and accepts only
// commands that print, delete, branch or change the pattern and hold
// spaces: no w/W (write a file), e (execute), r/R (read another file),
// s///w or s///e, and nothing it does not recognise.
func sedScriptSafe(s string) bool {
	i := 0
	for {
		i = skipSedBlanks(s, i, true)
		if i >= len(s) {
			return true
		}
		if s[i] == '#' {
			i = sedToEOL(s, i)
			continue
		}
		if i = skipSedAddress(s, i); i < 0 {
			return false
		}
		i = skipSedBlanks(s, i, false)
		for i < len(s) && s[i] == '!' {
			i = skipSedBlanks(s, i+1, false)
		}
		if i >= len(s) {
			return false // an address without a command
		}
		c := s[i]
		i++
		switch c {
		case '{':
			continue // a block opens; its first command follows
		case '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'l', 'L', 'q', 'Q':
			i = skipSedBlanks(s, i, false)
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case ':', 'b', 't', 'T', 'v':
			i = sedLabel(s, i)
		case 'a', 'i', 'c':
			i = sedText(s, i)
		case 's':
			var ok bool
			if i, ok = skipSedDelimited(s, i, 2, 1); !ok {
				return false
			}
			for i < len(s) && (s[i] == 'g' || s[i] == 'p' || s[i] == 'i' || s[i] == 'I' || s[i] == 'm' ||
				s[i] == 'M' || s[i] >= '0' && s[i] <= '9') {
				i++
			}
		case 'y':
			var ok bool
			if i, ok = skipSedDelimited(s, i, 2, 0); !ok {
				return false
			}
		default:
			return false // e, r, R, w, W and anything unknown
		}
		// The end of a command: blanks, then ; or a newline or } or #.
		i = skipSedBlanks(s, i, false)
		if i < len(s) && s[i] != ';' && s[i] != '\n' && s[i] != '}' && s[i] != '#' {
			if c != ':' && c != 'b' && c != 't' && c != 'T' && c != 'v' {
				return false
			}
			// After a label GNU sed reads the rest as the next command.
		}
	}
}

func skipSedBlanks(s string, i int, semis bool) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || semis && (s[i] == ';' || s[i] == '\n')) {
		i++
	}
	return i
}

func sedToEOL(s string, i int) int {
	for i < len(s) && s[i] != '\n' {
		i++
	}
	return i
}

// sedLabel skips a label as GNU sed's read_label does: blanks, then up to
// a blank, ";" or newline. What follows is parsed as the next command.
func sedLabel(s string, i int) int {
	i = skipSedBlanks(s, i, false)
	for i < len(s) && s[i] != ' ' && s[i] != '\t' && s[i] != ';' && s[i] != '\n' {
		i++
	}
	return i
}

// sedText skips the text of a, i and c: to the end of the line, where a
// backslash before the newline continues it.
func sedText(s string, i int) int {
	for i < len(s) && s[i] != '\n' {
		if s[i] == '\\' {
			i++
		}
		i++
	}
	return i
}

// skipSedAddress skips an address or address range: numbers, $, first~step,
// /regex/ and \cregexc with I/M flags, and ,addr2 / ,+N / ,~N.
func skipSedAddress(s string, i int) int {
	for part := 0; part < 2; part++ {
		switch {
		case i < len(s) && s[i] == '/':
			j, ok := skipSedDelimited(s, i, 1, 1)
			if !ok {
				return -1
			}
			i = j
			for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		case i+1 < len(s) && s[i] == '\\':
			j, ok := skipSedDelimited(s, i+1, 1, 1)
			if !ok {
				return -1
			}
			i = j
			for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		default:
			for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '$' || s[i] == '~' || s[i] == '+') {
				i++
			}
		}
		i = skipSedBlanks(s, i, false)
		if part == 1 || i >= len(s) || s[i] != ',' {
			return i
		}
		i = skipSedBlanks(s, i+1, false)
	}
	return i
}

// skipSedDelimited skips n delimited fields starting at the delimiter s[i]
// (for s/a/b/ n=2 starting at the first "/"), honouring backslash escapes.
// The first regexFields fields are regular expressions: GNU sed does not
// end them at a delimiter inside a bracket expression ([/]), so a bracket
// expression is skipped whole, and one holding the delimiter, a backslash
// or a newline is refused rather than guessed at.
func skipSedDelimited(s string, i, n, regexFields int) (int, bool) {
	if i >= len(s) || s[i] == '\n' || s[i] == '\\' {
		return 0, false
	}
	d := s[i]
	i++
	for f := 0; f < n; f++ {
		for i < len(s) && s[i] != d {
			switch {
			case s[i] == '\\':
				i += 2
			case s[i] == '[' && f < regexFields:
				j, ok := skipBracket(s, i, d)
				if !ok {
					return 0, false
				}
				i = j
			default:
				i++
			}
		}
		if i >= len(s) {
			return 0, false
		}
		i++
	}
	return i, true
}

// skipBracket skips the bracket expression at s[i] == '[' (a leading "^"
// and "]" are literal; [:class:], [=x=] and [.x.] are units). It refuses
// one that holds the delimiter d, a backslash or a newline, or has no end.
func skipBracket(s string, i int, d byte) (int, bool) {
	j := i + 1
	if j < len(s) && s[j] == '^' {
		j++
	}
	if j < len(s) && s[j] == ']' {
		j++
	}
	for j < len(s) {
		c := s[j]
		switch {
		case c == ']':
			return j + 1, true
		case c == d || c == '\\' || c == '\n':
			return 0, false
		case c == '[' && j+1 < len(s) && (s[j+1] == ':' || s[j+1] == '=' || s[j+1] == '.'):
			end := strings.Index(s[j+2:], string(s[j+1])+"]")
			if end < 0 || strings.ContainsAny(s[j+2:j+2+end], string(d)+"\\\n") {
				return 0, false
			}
			j += end + 4
		default:
			j++
		}
	}
	return 0, false
}
