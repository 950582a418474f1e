package glance

import "strings"
import "sync"

// kind says whether an option takes a value.
type kind uint8

const (
	none     kind = iota
	flag          // takes no value
	value         // takes a value: glued (-n5, --lines=5) or the next word
	optional      // takes a value only when glued (-uno, --color=auto)
)

// optSet is the exact list of options a verb (or subcommand) may take. It
// keeps its spec and is parsed on first use: flower-hook starts once per
// tool call, and parsing every verb's list up front would cost each start
// more than a whole classification.
type optSet struct {
	specs []string
	once  sync.Once
	t     optTable
}

type optTable struct {
	short   [128]kind
	long    map[string]kind
	numeric bool // -NUM is an option (head -20, git log -5)
}

// opts builds an optSet from a compact spec, fields separated by blanks:
//
//	-abc      the flags -a, -b and -c
//	-n:       -n takes a value
//	-u?       -u takes a value only when glued (-uno)
//	--all     a long flag
//	--lines=  a long option that takes a value (--lines=5 or --lines 5)
//	--color=? a long option whose value may only be glued (--color=auto)
//	-#        -NUM is allowed
func opts(specs ...string) *optSet { return &optSet{specs: specs} }

// tab returns the parsed table.
func (o *optSet) tab() *optTable {
	o.once.Do(func() {
		o.t.long = map[string]kind{}
		for _, spec := range o.specs {
			for _, f := range strings.Fields(spec) {
				o.t.add(f)
			}
		}
	})
	return &o.t
}

func (t *optTable) add(f string) {
	switch {
	case f == "-#":
		t.numeric = true
	case strings.HasPrefix(f, "--"):
		k := flag
		switch {
		case strings.HasSuffix(f, "=?"):
			k, f = optional, f[:len(f)-2]
		case strings.HasSuffix(f, "="):
			k, f = value, f[:len(f)-1]
		}
		t.long[f] = k
	case len(f) == 3 && f[2] == ':':
		t.short[f[1]] = value
	case len(f) == 3 && f[2] == '?':
		t.short[f[1]] = optional
	case strings.HasPrefix(f, "-") && len(f) > 1:
		for i := 1; i < len(f); i++ {
			t.short[f[i]] = flag
		}
	default:
		panic("glance: bad option spec " + f)
	}
}

// with returns a new set holding o's options and those of specs.
func (o *optSet) with(specs ...string) *optSet {
	return opts(append(append([]string{}, o.specs...), specs...)...)
}

// scanner walks a verb's words: options are checked against an optSet and
// consume their values; everything else is an operand.
type scanner struct {
	args []arg
	i    int
	// ended is set once "--" was seen: every later word is an operand.
	ended bool
}

// next returns the next operand, checking and skipping the options before
// it. It returns ok=false on an option not in o (or a value-taking option
// without its value), and done=true when no word is left.
func (s *scanner) next(o *optSet) (operand arg, done, ok bool) {
	for s.i < len(s.args) {
		a := s.args[s.i]
		s.i++
		if s.ended || !a.known || len(a.v) < 2 || a.v[0] != '-' {
			return a, false, true
		}
		if a.v == "--" {
			s.ended = true
			continue
		}
		if !s.option(o, a.v) {
			return arg{}, false, false
		}
	}
	return arg{}, true, true
}

// sub returns the next operand as a subcommand, checking the options before
// it against o. ok is false on an option not in o, when no word is left, or
// when the word came after "--" (an operand then, never a subcommand).
func (s *scanner) sub(o *optSet) (string, bool) {
	w, done, ok := s.next(o)
	return w.v, ok && !done && !s.ended
}

// option checks one option word (and consumes its value when it takes one).
func (s *scanner) option(set *optSet, w string) bool {
	o := set.tab()
	if strings.HasPrefix(w, "--") {
		name, _, glued := strings.Cut(w, "=")
		switch o.long[name] {
		case flag:
			return !glued
		case optional:
			return true
		case value:
			return glued || s.takeValue()
		}
		return false
	}
	if o.numeric && isDigits(w[1:]) {
		return true
	}
	for j := 1; j < len(w); j++ {
		c := w[j]
		if c >= 128 {
			return false
		}
		switch o.short[c] {
		case flag:
			continue
		case optional:
			return true
		case value:
			return j+1 < len(w) || s.takeValue()
		}
		return false
	}
	return true
}

// takeValue consumes the next word as an option's value.
func (s *scanner) takeValue() bool {
	if s.i >= len(s.args) {
		return false
	}
	s.i++
	return true
}

// operands scans all words with o and returns the operands, or ok=false.
func operands(o *optSet, args []arg) ([]arg, bool) {
	s := scanner{args: args}
	var out []arg
	for {
		a, done, ok := s.next(o)
		if !ok {
			return nil, false
		}
		if done {
			return out, true
		}
		out = append(out, a)
	}
}

// verb is one allowed command.
type verb struct {
	// opts is the exact option list; nil means the verb takes no options.
	opts *optSet
	// harmless: none of the real program's options or operands writes,
	// runs or changes anything, so words whose value is only known after
	// expansion ($f, *.go) are accepted as operands.
	harmless bool
	// operands checks the operand shape (nil: any known operands).
	operands func(ops []arg) bool
	// custom replaces the option scan for verbs with their own grammar
	// (git, find, sed, awk, docker, kubectl, test, …).
	custom func(args []arg) bool
}

func (v *verb) accepts(args []arg) bool {
	if v.custom != nil {
		return v.custom(args)
	}
	if !v.harmless && !allKnown(args) {
		return false
	}
	o := v.opts
	if o == nil {
		o = noOpts
	}
	ops, ok := operands(o, args)
	if !ok {
		return false
	}
	return v.operands == nil || v.operands(ops)
}

var noOpts = opts()

// allKnown reports whether every word's value is known before expansion.
func allKnown(args []arg) bool {
	for _, a := range args {
		if !a.known {
			return false
		}
	}
	return true
}

// values returns the words' values.
func values(args []arg) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a.v
	}
	return out
}

func maxOperands(n int) func([]arg) bool {
	return func(ops []arg) bool { return len(ops) <= n }
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// takesNext reports whether option word w, under o, consumes the next
// word as its value (so a pre-pass over the words can skip that value
// instead of reading it as an option or operand).
func (set *optSet) takesNext(w string) bool {
	o := set.tab()
	if len(w) < 2 || w[0] != '-' || w == "--" {
		return false
	}
	if strings.HasPrefix(w, "--") {
		return !strings.Contains(w, "=") && o.long[w] == value
	}
	for j := 1; j < len(w); j++ {
		if w[j] >= 128 {
			return false
		}
		switch o.short[w[j]] {
		case value:
			return j+1 == len(w)
		case flag:
			continue
		}
		return false
	}
	return false
}
