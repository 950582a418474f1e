package glance

import (
	"strings"
)

// awkRule accepts awk with an inline program that awkProgramSafe accepts,
// and only -F and -v (with values) as options: no -f (program from a
// file), -e/-i/-l/-E (gawk sources and extensions) or anything else.
func awkRule(args []arg) bool {
	if !allKnown(args) {
		return false
	}
	for i := 0; i < len(args); i++ {
		a := args[i].v
		switch {
		case a == "-F" || a == "-v":
			i++
		case len(a) > 2 && (a[:2] == "-F" || a[:2] == "-v"):
		case a == "--":
			return i+1 < len(args) && awkProgramSafe(args[i+1].v)
		case len(a) > 1 && a[0] == '-':
			return false
		default:
			return awkProgramSafe(a)
		}
	}
	return false
}

// awkProgramSafe tokenizes an awk program (strings, regex literals and
// comments are skipped as units) and refuses system, getline, any pipe
// ("|", but not "||"), "@" (gawk directives and indirect calls) and any
// ">" or ">>" at parenthesis depth 0 inside a print or printf statement
// (an output redirection). A program it cannot tokenize is refused.
func awkProgramSafe(p string) bool {
	inPrint := false
	depth := 0         // parentheses opened since the print statement began
	operand := false   // the last token ends an operand: a "/" is division
	ambiguous := false // that token is a name or ")": mawk and gawk disagree
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			i++
			continue
		case c == '\\' && i+1 < len(p) && p[i+1] == '\n':
			i += 2
			continue
		case c == '#':
			for i < len(p) && p[i] != '\n' {
				i++
			}
			continue
		case c == '\n':
			// A newline may continue a print statement (after "," or
			// "&&"): keep looking for its redirection.
			i++
			operand = false
			continue
		case c == ';' || c == '{' || c == '}':
			inPrint, depth, operand = false, 0, false
			i++
			continue
		case c == '"':
			j, ok := awkSkipQuoted(p, i, '"')
			if !ok {
				return false
			}
			i, operand, ambiguous = j, true, false
			continue
		case c == '/' && operand && ambiguous:
			// mawk reads a "/" after length, exit, getline, ")" or a name
			// as a regex, gawk as a division: the two lex the rest apart.
			return false
		case c == '/' && !operand:
			j, ok := awkSkipQuoted(p, i, '/')
			if !ok {
				return false
			}
			i, operand, ambiguous = j, true, false
			continue
		case isAwkWordByte(c):
			j := i
			for j < len(p) && isAwkWordByte(p[j]) {
				j++
			}
			w := p[i:j]
			switch w {
			case "system", "getline":
				return false
			case "print", "printf":
				inPrint, depth = true, 0
			}
			i, operand = j, !inSet(awkKeywords, w)
			ambiguous = operand && !(w[0] >= '0' && w[0] <= '9' || w[0] == '.')
			continue
		case (c == '+' || c == '-') && i+1 < len(p) && p[i+1] == c:
			// ++ and -- keep the operand state: x++ / 2 is a division.
			i += 2
			continue
		case c == '|':
			if i+1 < len(p) && p[i+1] == '|' {
				i += 2
				operand = false
				continue
			}
			return false
		case c == '@' || c == '`':
			return false
		case c == '>':
			if inPrint && depth == 0 {
				return false
			}
		case c == '(':
			depth++
		case c == ')':
			depth--
			i++
			operand, ambiguous = true, true
			continue
		case c == ']':
			i++
			operand, ambiguous = true, false
			continue
		case c == '$':
			i++
			operand = false
			continue
		}
		i++
		operand = false
	}
	return true
}

// awkKeywords are words after which a "/" starts a regex, not a division.
const awkKeywords = "print printf return in if while for do else delete case"

func isAwkWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.'
}

// awkSkipQuoted skips a string or regex literal starting at p[i] == q,
// honouring backslash escapes; a newline inside is an error.
func awkSkipQuoted(p string, i int, q byte) (int, bool) {
	i++
	for i < len(p) {
		switch p[i] {
		case '\\':
			i += 2
			continue
		case '\n':
			return 0, false
		case q:
			return i + 1, true
		}
		if q == '/' && p[i] == '[' {
			j, ok := awkBracketEnd(p, i)
			if !ok {
				return 0, false
			}
			i = j
			continue
		}
		i++
	}
	return 0, false
}

// awkBracketEnd returns the index after the bracket expression starting at
// p[i] == '[', ended where POSIX ends it: a "]" right after "[" or "[^" is
// a member, and [:class:], [.coll.] and [=equiv=] are skipped whole. A "/",
// a backslash or a newline inside is refused: whether "/" ends the regex
// there and what "\]" means is where mawk, gawk and onetrue awk part.
func awkBracketEnd(p string, i int) (int, bool) {
	k := i + 1
	if k < len(p) && p[k] == '^' {
		k++
	}
	if k < len(p) && p[k] == ']' {
		k++
	}
	for k < len(p) {
		switch c := p[k]; {
		case c == ']':
			return k + 1, true
		case c == '/' || c == '\\' || c == '\n':
			return 0, false
		case c == '[' && k+1 < len(p) && (p[k+1] == ':' || p[k+1] == '.' || p[k+1] == '='):
			end := strings.Index(p[k+2:], string(p[k+1])+"]")
			if end < 0 || strings.ContainsAny(p[k+2:k+2+end], "/\\\n") {
				return 0, false
			}
			k += 2 + end + 2
		default:
			k++
		}
	}
	return 0, false
}
