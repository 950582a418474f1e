package glance

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Where bash and mvdan.cc/sh read the same text apart, the classifier
// would judge a command bash never runs. Two such places are closed here
// at the root:
//
//   - ANSI-C quoting ($'…'): bash 5.2 decodes \x{2d}, \u…, \c… and more
//     that mvdan.cc/sh's expander keeps literal. decodeANSIC decodes the
//     escapes whose meaning is fixed and simple (\a \b \e \E \f \n \r \t \v
//     \\ \' \" \?, octal \1-\377, \xH and \xHH) exactly as bash does, and
//     refuses every other backslash, a NUL and any byte above 0x7f. The
//     decoded text replaces the part in the tree (as a plain '…'), so every
//     later rule sees what bash passes. Locale strings ($"…") are refused:
//     a message catalog can turn them into anything.
//   - Here-documents: bash removes backslash-newline in an unquoted
//     here-document before it compares a line with the delimiter ("tru\" +
//     newline + "e" ends <<true), the parser does not. A here-document whose
//     body holds a backslash-newline is refused, and the delimiter must be a
//     plain word (EOF, 'EOF', "EOF", \EOF) so both read it alike.
//
// The differential test runs real bash on ANSI-C words and here-documents.

// decodeQuote rewrites a $'…' part into the plain '…' bash makes of it
// (safeNodes calls it on every quoted part); ok is false when it holds an
// escape outside the decoded set, or for any $"…".
func decodeQuote(n syntax.Node) bool {
	switch n := n.(type) {
	case *syntax.SglQuoted:
		if n.Dollar {
			v, ok := decodeANSIC(n.Value)
			if !ok {
				return false
			}
			n.Dollar, n.Value = false, v
		}
	case *syntax.DblQuoted:
		return !n.Dollar
	}
	return true
}

// decodeANSIC decodes the body of $'…' as bash 5.2's ansicstr does, for
// the escapes it knows; ok is false for any other escape, for a decoded NUL
// (bash ends the word there) and for a decoded byte above 0x7f.
func decodeANSIC(s string) (string, bool) {
	if !strings.Contains(s, `\`) {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(s) {
			return "", false
		}
		i++
		var v int
		switch e := s[i]; e {
		case 'a':
			v = 7
		case 'b':
			v = 8
		case 'e', 'E':
			v = 27
		case 'f':
			v = 12
		case 'n':
			v = '\n'
		case 'r':
			v = '\r'
		case 't':
			v = '\t'
		case 'v':
			v = 11
		case '\\', '\'', '"', '?':
			v = int(e)
		case '1', '2', '3', '4', '5', '6', '7':
			// Up to three octal digits in all (a leading 0 is refused:
			// echo -e and $'…' count its digits differently).
			v = int(e - '0')
			for n := 0; n < 2 && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '7'; n++ {
				i++
				v = v*8 + int(s[i]-'0')
			}
		case 'x':
			// One or two hex digits; \x{…} (bash's unbounded form) is out.
			n := 0
			for n < 2 && i+1 < len(s) && hexVal(s[i+1]) >= 0 {
				i++
				v = v*16 + hexVal(s[i])
				n++
			}
			if n == 0 {
				return "", false
			}
		default:
			return "", false // \c, \u, \U, \0, \x{…} and unknown escapes
		}
		if v <= 0 || v > 0x7f {
			return "", false
		}
		b.WriteByte(byte(v))
	}
	return b.String(), true
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// hereDocOK checks a here-document redirection against its source text:
// the delimiter is a plain word, optionally wholly quoted or led by one
// backslash, and the body holds no backslash-newline.
func hereDocOK(r *syntax.Redirect, src string) bool {
	if r.Op != syntax.Hdoc && r.Op != syntax.DashHdoc {
		return true // not a here-document (a here-string is an ordinary word)
	}
	if r.Word == nil {
		return false
	}
	delim := src[r.Word.Pos().Offset():r.Word.End().Offset()]
	switch {
	case len(delim) > 2 && (delim[0] == '\'' || delim[0] == '"') && delim[len(delim)-1] == delim[0]:
		delim = delim[1 : len(delim)-1]
	case len(delim) > 1 && delim[0] == '\\':
		delim = delim[1:]
	}
	if delim == "" {
		return false
	}
	for i := 0; i < len(delim); i++ {
		if c := delim[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	if r.Hdoc == nil || len(r.Hdoc.Parts) == 0 {
		return true
	}
	body := src[r.Hdoc.Pos().Offset():r.Hdoc.End().Offset()]
	return !strings.Contains(body, "\\\n")
}
