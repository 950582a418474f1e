package redact

import (
	"bytes"
	"regexp/syntax"
)

// A rule's regular expression runs only on text one of its keywords is in,
// but a keyword is often an ordinary word ("coherent" holds cohere's, a
// curl command in a prompt holds the curl rules'), and then Go's regexp
// scans the whole text without a literal to skip to (the cohere rule: 43 ms
// on a 155 KB transcript). needs are what any match of the pattern must
// contain, read from its syntax tree: a case-sensitive literal from a set
// of alternatives (curl's "-H" or "--header"), or a run of n characters of
// an ASCII class (a token's 40 alphanumerics). When the text lacks one, no
// match can exist and the pattern is not run: the result is the same.

// need is one thing every match contains.
type need struct {
	any   [][]byte // one of these literals, or
	class *[128]bool
	run   int // a run of run characters of class
}

// maxAlts bounds the alternatives a literal need is expanded to.
const maxAlts = 16

// needsOf are the needs of pattern (parsed as regexp.Compile parses it);
// nil when it does not parse.
func needsOf(pattern string) []need {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	var out []need
	collectNeeds(re, &out)
	return out
}

// collectNeeds adds to out what re, which every match holds a match of,
// requires.
func collectNeeds(re *syntax.Regexp, out *[]need) {
	switch re.Op {
	case syntax.OpCapture:
		collectNeeds(re.Sub[0], out)
	case syntax.OpRepeat, syntax.OpPlus:
		if re.Op == syntax.OpPlus || re.Min >= 1 {
			if c := asciiClass(re.Sub[0]); c != nil && re.Min >= 8 {
				*out = append(*out, need{class: c, run: re.Min})
				return
			}
			collectNeeds(re.Sub[0], out)
		}
	case syntax.OpConcat:
		var run [][]byte // the literal alternatives of adjacent subs so far
		flush := func() {
			if len(run) > 0 && !hasEmpty(run) {
				*out = append(*out, need{any: run})
			}
			run = nil
		}
		for _, sub := range re.Sub {
			lits := literals(sub)
			if lits == nil || run != nil && len(run)*len(lits) > maxAlts {
				flush()
			}
			if lits == nil {
				collectNeeds(sub, out)
				continue
			}
			if run == nil {
				run = lits
				continue
			}
			var joined [][]byte
			for _, a := range run {
				for _, b := range lits {
					joined = append(joined, append(append([]byte{}, a...), b...))
				}
			}
			run = joined
		}
		flush()
	default:
		if lits := literals(re); lits != nil && !hasEmpty(lits) {
			*out = append(*out, need{any: lits})
		}
	}
}

// literals are the strings re matches exactly, when it is a case-sensitive
// literal, an alternation or concatenation of such, or a group of one;
// nil otherwise or when there would be more than maxAlts.
func literals(re *syntax.Regexp) [][]byte {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil
		}
		return [][]byte{[]byte(string(re.Rune))}
	case syntax.OpCapture:
		return literals(re.Sub[0])
	case syntax.OpAlternate:
		var out [][]byte
		for _, sub := range re.Sub {
			l := literals(sub)
			if l == nil || len(out)+len(l) > maxAlts {
				return nil
			}
			out = append(out, l...)
		}
		return out
	case syntax.OpConcat:
		out := [][]byte{{}}
		for _, sub := range re.Sub {
			l := literals(sub)
			if l == nil || len(out)*len(l) > maxAlts {
				return nil
			}
			var joined [][]byte
			for _, a := range out {
				for _, b := range l {
					joined = append(joined, append(append([]byte{}, a...), b...))
				}
			}
			out = joined
		}
		return out
	}
	return nil
}

func hasEmpty(lits [][]byte) bool {
	for _, l := range lits {
		if len(l) == 0 {
			return true
		}
	}
	return false
}

// asciiClass is the set of re's characters when re is a class (or a single
// case-sensitive literal character) of ASCII characters only.
func asciiClass(re *syntax.Regexp) *[128]bool {
	var c [128]bool
	switch re.Op {
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i+1] >= 128 {
				return nil
			}
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				c[r] = true
			}
		}
	default:
		return nil
	}
	return &c
}

// met reports whether text holds n.
func (n need) met(text []byte) bool {
	if n.class == nil {
		for _, l := range n.any {
			if bytes.Contains(text, l) {
				return true
			}
		}
		return false
	}
	count := 0
	for _, c := range text {
		if c < 128 && n.class[c] {
			if count++; count >= n.run {
				return true
			}
		} else {
			count = 0
		}
	}
	return false
}

// mayMatch reports whether text holds every need of the rule's pattern.
func (r *rule) mayMatch(text []byte) bool {
	for _, n := range r.needsNow() {
		if !n.met(text) {
			return false
		}
	}
	return true
}
