package redact

// The secret shapes: gitleaks' default rule set (gitleaks.toml, vendored
// verbatim from github.com/gitleaks/gitleaks tag v8.30.1, config/gitleaks.toml,
// MIT licence in gitleaks.LICENSE) and flower's own additions in the same
// format (flower.toml). The file is data, not the gitleaks Go module: the
// module links viper, zerolog, cobra, archive readers and more, and
// flower-hook, which redacts spill files, must stay small. The two files
// reach the code as Go values (rules_gen.go), not parsed at run time: a
// TOML parser would cost flower-hook's every start its initialisation and
// size (docs/performance.md). To update, copy the newer
// config/gitleaks.toml over this one and run
// `go test ./internal/redact -run TestRulesGenerated -update-rules`, then
// the package's tests (TestRulesGenerated holds rules_gen.go to the TOML
// files, TestRulesLoad counts and compiles every rule).
//
// Semantics follow gitleaks' detector: a rule is tried only when one of
// its keywords occurs (case-insensitively) in the text; the secret is the
// rule's secretGroup, else its first non-empty group, else the whole
// match; a secret whose Shannon entropy is at most the rule's entropy is
// skipped, and so is one an allowlist (the file's global one, or the
// rule's) allows. Allowlists that need a file path never apply (flower
// redacts text, not files).

import (
	"math"
	"regexp"
	"strings"
	"sync"
)

// ruleFile is the part of gitleaks' config format flower reads.
type ruleFile struct {
	Allowlist *allowDef `toml:"allowlist"`
	Rules     []ruleDef `toml:"rules"`
}

type ruleDef struct {
	ID          string     `toml:"id"`
	Regex       string     `toml:"regex"`
	SecretGroup int        `toml:"secretGroup"`
	Entropy     float64    `toml:"entropy"`
	Keywords    []string   `toml:"keywords"`
	Path        string     `toml:"path"`
	Allowlists  []allowDef `toml:"allowlists"`
}

type allowDef struct {
	Condition   string   `toml:"condition"`
	RegexTarget string   `toml:"regexTarget"`
	Regexes     []string `toml:"regexes"`
	Stopwords   []string `toml:"stopwords"`
	Paths       []string `toml:"paths"`
}

// rule is a loaded rule; its regexes compile on first use.
type rule struct {
	def    ruleDef
	global *allowList // the allowlist of the rule's file, or nil
	allow  []*allowList
	once   sync.Once
	re     *regexp.Regexp
	// needsOnce reads needs.
	needsOnce sync.Once
	// assign marks gitleaks' generic-api-key, the one rule with no literal
	// to anchor on: slow in Go's regexp (about 1 MB/s), it runs only on
	// windows around a keyword followed by an assignment (see assignAt).
	assign bool
	// wordStart: the compiled pattern lacks the \b it starts with (see
	// regexp).
	wordStart bool
	// needs are what any match of the pattern contains (required.go),
	// read on first use (needsNow).
	needs []need
}

// regexp is the rule's pattern, compiled on first use. A pattern that
// starts with \b and then a literal is compiled without the \b (Go's
// regexp then skips to the literal, ten times faster) and wordStart is set:
// matches checks the boundary itself.
func (r *rule) regexp() *regexp.Regexp {
	r.once.Do(func() {
		if rest, ok := strings.CutPrefix(r.def.Regex, `\b`); ok {
			if re := regexp.MustCompile(rest); func() bool { p, _ := re.LiteralPrefix(); return p != "" }() {
				r.re, r.wordStart = re, true
				return
			}
		}
		r.re = regexp.MustCompile(r.def.Regex)
	})
	return r.re
}

// needsNow is what any match of the rule's pattern contains, read from
// its syntax on first use. It parses and does not compile, so a rule is
// compiled only once a text meets its needs. (They hold for what regexp
// compiles too: a match of the pattern without its leading \b, kept only
// at a word start, is a match of the whole pattern.)
func (r *rule) needsNow() []need {
	r.needsOnce.Do(func() { r.needs = needsOf(r.def.Regex) })
	return r.needs
}

// atWordStart reports whether \b holds before b[i].
func atWordStart(b []byte, i int) bool {
	before := i > 0 && isWordChar(b[i-1])
	return before != (i < len(b) && isWordChar(b[i]))
}

func isWordChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// allowList is a loaded allowlist.
type allowList struct {
	def   allowDef
	once  sync.Once
	res   []*regexp.Regexp
	stops []string
}

func newAllowList(d allowDef) *allowList {
	a := &allowList{def: d}
	for _, s := range d.Stopwords {
		a.stops = append(a.stops, strings.ToLower(s))
	}
	return a
}

func (a *allowList) regexps() []*regexp.Regexp {
	a.once.Do(func() {
		for _, s := range a.def.Regexes {
			a.res = append(a.res, regexp.MustCompile(s))
		}
	})
	return a.res
}

// allows reports whether a finding (its secret, its whole match and the
// line it is on) is allowed, as gitleaks' checkFindingAllowed decides
// with no path and no commit.
func (a *allowList) allows(secret, match, line string) bool {
	if len(a.def.Paths) > 0 && strings.EqualFold(a.def.Condition, "AND") {
		return false // needs a path to match, and flower has none
	}
	target := secret
	switch a.def.RegexTarget {
	case "match":
		target = match
	case "line":
		target = line
	}
	regexHit, stopHit := false, false
	for _, re := range a.regexps() {
		if re.MatchString(target) {
			regexHit = true
			break
		}
	}
	low := strings.ToLower(secret)
	for _, s := range a.stops {
		if strings.Contains(low, s) {
			stopHit = true
			break
		}
	}
	if strings.EqualFold(a.def.Condition, "AND") {
		return (len(a.def.Regexes) == 0 || regexHit) && (len(a.stops) == 0 || stopHit) &&
			(len(a.def.Regexes) > 0 || len(a.stops) > 0)
	}
	return regexHit || stopHit
}

// ruleSet is every rule with its keyword index.
type ruleSet struct {
	rules []*rule
	// slot maps the first two (lower-case) bytes of a keyword to its
	// bucket in by (0: no keyword starts so).
	slot [1 << 16]uint16
	by   [][]keyword
}

type keyword struct {
	word  string // lower case
	rules []int
}

// loadRules indexes the rule files; a rule without a regex (gitleaks'
// path-only rules) is left out.
func loadRules(files ...ruleFile) *ruleSet {
	set := &ruleSet{by: [][]keyword{nil}}
	kws := map[string][]int{}
	for _, f := range files {
		var global *allowList
		if f.Allowlist != nil {
			global = newAllowList(*f.Allowlist)
		}
		for _, d := range f.Rules {
			if d.Regex == "" || len(d.Keywords) == 0 {
				continue
			}
			r := &rule{def: d, global: global, assign: d.ID == "generic-api-key"}
			for _, a := range d.Allowlists {
				r.allow = append(r.allow, newAllowList(a))
			}
			for _, k := range d.Keywords {
				k = strings.ToLower(k)
				kws[k] = append(kws[k], len(set.rules))
			}
			set.rules = append(set.rules, r)
		}
	}
	for w, rs := range kws {
		if len(w) < 2 {
			continue
		}
		k := pair(w[0], w[1])
		if set.slot[k] == 0 {
			set.slot[k] = uint16(len(set.by))
			set.by = append(set.by, nil)
		}
		set.by[set.slot[k]] = append(set.by[set.slot[k]], keyword{w, rs})
	}
	return set
}

// rules are the rule files indexed once.
var rules = sync.OnceValue(func() *ruleSet { return loadRules(gitleaksRules, flowerRules) })

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func pair(a, b byte) uint16 { return uint16(lower(a))<<8 | uint16(lower(b)) }

// hasPrefixFold reports whether b starts with w (lower case ASCII),
// ignoring the case of b.
func hasPrefixFold(b []byte, w string) bool {
	if len(b) < len(w) {
		return false
	}
	for i := 0; i < len(w); i++ {
		if lower(b[i]) != w[i] {
			return false
		}
	}
	return true
}

// active returns the indexes of the rules one of whose keywords b holds
// (nil for none) and, for the assign rules, the windows of b they are to
// run on.
func (s *ruleSet) active(b []byte) (out []int, windows [][2]int) {
	var on []bool
	for i := 0; i+1 < len(b); i++ {
		slot := s.slot[pair(b[i], b[i+1])]
		if slot == 0 {
			continue
		}
		for _, kw := range s.by[slot] {
			if !hasPrefixFold(b[i:], kw.word) {
				continue
			}
			if on == nil {
				on = make([]bool, len(s.rules))
			}
			for _, r := range kw.rules {
				if s.rules[r].assign {
					w, ok := assignAt(b, i, i+len(kw.word))
					if !ok {
						continue
					}
					windows = append(windows, w)
				}
				if !on[r] {
					on[r] = true
					out = append(out, r)
				}
			}
		}
	}
	return out, windows
}

// assignAt reports whether the keyword at b[s:e] is followed as
// generic-api-key requires: by at most 20 word characters, spaces or tabs,
// at most 3 spaces or quotes, an assignment (=, >, :, |, ?=, ","), at most
// 5 quotes, spaces or '=', and a value of 10 or more characters that ends
// at a quote, a space, ';' or the end. It returns the window a match
// holding it lies in (50 characters before it to the value's end).
func assignAt(b []byte, s, e int) ([2]int, bool) {
	i := skip(b, e, 20, func(c byte) bool { return isWord(c) || c == ' ' || c == '\t' })
	i = skip(b, i, 3, func(c byte) bool { return isSpace(c) || c == '\'' || c == '"' })
	op := skip(b, i, 3, func(c byte) bool { return strings.IndexByte("=>:|?,", c) >= 0 })
	if op == i {
		return [2]int{}, false
	}
	i = skip(b, op, 5, func(c byte) bool { return isSpace(c) || c == '\'' || c == '"' || c == '`' || c == '=' })
	v := skip(b, i, len(b), func(c byte) bool { return isWord(c) || c == '=' || c == '+' || c == '/' })
	if v-i < 10 || v < len(b) && !isSpace(b[v]) && strings.IndexByte("`'\";", b[v]) < 0 {
		return [2]int{}, false
	}
	return [2]int{max(0, s-51), min(len(b), v+1)}, true
}

// skip returns the index after at most n bytes of b from i that are ok.
func skip(b []byte, i, n int, ok func(byte) bool) int {
	for end := min(len(b), i+n); i < end && ok(b[i]); i++ {
	}
	return i
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isWord(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

// secretSpan is the span of a match's secret (see the package comment),
// trimmed of newlines as gitleaks trims them.
func (r *rule) secretSpan(m []int) (int, int) {
	s, e := m[0], m[1]
	if g := r.def.SecretGroup; g > 0 && 2*g+1 < len(m) {
		s, e = m[2*g], m[2*g+1]
	} else if g == 0 {
		for i := 2; i+1 < len(m); i += 2 {
			if m[i] >= 0 && m[i+1] > m[i] {
				s, e = m[i], m[i+1]
				break
			}
		}
	}
	return s, e
}

// keep reports whether the secret found in text at [s,e) by match m is
// one to replace: entropy above the rule's, and allowed by no allowlist.
func (r *rule) keep(text []byte, m []int, s, e int) bool {
	if s < 0 || e <= s {
		return false
	}
	secret := string(text[s:e])
	if r.def.Entropy > 0 && entropy(secret) <= r.def.Entropy {
		return false
	}
	if r.global == nil && len(r.allow) == 0 {
		return true
	}
	match := string(text[m[0]:m[1]])
	ls, le := m[0], m[1]
	for ls > 0 && text[ls-1] != '\n' {
		ls--
	}
	for le < len(text) && text[le] != '\n' {
		le++
	}
	line := string(text[ls:le])
	if r.global != nil && r.global.allows(secret, match, line) {
		return false
	}
	for _, a := range r.allow {
		if a.allows(secret, match, line) {
			return false
		}
	}
	return true
}

// entropy is the Shannon entropy of s as gitleaks computes it.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	counts := map[rune]int{}
	for _, c := range s {
		counts[c]++
	}
	var h float64
	inv := 1 / float64(len(s))
	for _, n := range counts {
		p := float64(n) * inv
		h -= p * math.Log2(p)
	}
	return h
}
