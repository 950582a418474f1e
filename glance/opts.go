package glance

import (
	"strings"
	"sync"
)

// kind says whether an option takes a value.
type kind uint8

const (
	none      kind = iota
	flag           // takes no value
	value          // takes a value: glued (-n5, --lines=5) or the next word
	optional       // takes a value only when glued (-uno, --color=auto)
	gluedOnly      // a long option valid only with a glued value (git's --format=)
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
//	--format=! a long option that exists only with a glued value
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
		case strings.HasSuffix(f, "=!"):
			k, f = gluedOnly, f[:len(f)-2]
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
	// strict: an option's value must be a known field (an unknown one,
	// a glob or a parameter, could turn into an option).
	strict bool
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

// isOption reports whether a field would be read as an option.
func isOption(a arg) bool { return a.known && len(a.v) > 1 && a.v[0] == '-' }

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
			return glued || s.takeValue(set)
		case gluedOnly:
			return glued
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
			return j+1 < len(w) || s.takeValue(set)
		}
		return false
	}
	return true
}

// takeValue consumes the next word as an option's value. getopt_long
// hands a required argument the next word whatever it is, so a value that
// looks like an option is judged as one too (head -n -5 passes, sort -k
// -o does not); an unknown value is refused for strict verbs.
func (s *scanner) takeValue(set *optSet) bool {
	if s.i >= len(s.args) {
		return false
	}
	a := s.args[s.i]
	s.i++
	if !a.known {
		return !s.strict
	}
	if len(a.v) > 1 && a.v[0] == '-' && a.v != "--" {
		probe := scanner{args: s.args, i: s.i, strict: s.strict}
		return probe.option(set, a.v)
	}
	return true
}

// operands scans all words with o and returns the operands, or ok=false.
// Option values must be known (strict).
func operands(o *optSet, args []arg) ([]arg, bool) {
	return scanOperands(o, args, true)
}

func scanOperands(o *optSet, args []arg, strict bool) ([]arg, bool) {
	s := scanner{args: args, strict: strict}
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
	// noOpen: the program opens no file named by an operand or option
	// (echo, ls, stat, basename): an unbound parameter may be passed.
	noOpen bool
	// files: a strict verb whose operands are plain files or patterns in
	// any number, so a glob whose literal prefix cannot start with "-"
	// may be one (sort src/*.txt).
	files bool
}

func (v *verb) accepts(args []arg) bool {
	for _, a := range args {
		if !pathOK(a, v.noOpen) {
			return false
		}
	}
	if v.custom != nil {
		return v.custom(args)
	}
	if !v.harmless && !v.unknownsOK(args) {
		return false
	}
	o := v.opts
	if o == nil {
		o = noOpts
	}
	ops, ok := scanOperands(o, args, !v.harmless)
	if !ok {
		return false
	}
	if v.operands != nil && !allKnown(ops) {
		return false // the count of a glob's fields is not known
	}
	return v.operands == nil || v.operands(ops)
}

// unknownsOK: a strict verb takes an unknown field only as a file operand
// (files) and only a glob whose literal prefix guarantees no expansion
// starts with "-".
func (v *verb) unknownsOK(args []arg) bool {
	for _, a := range args {
		if !a.known && !(v.files && v.operands == nil && a.glob && a.prefix != "" && a.prefix[0] != '-') {
			return false
		}
	}
	return true
}

var noOpts = &optSet{specs: []string{}}

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

// treeClusters: tree parses its own options (tree.c, main): in a cluster
// each letter that takes a value takes the next argv word, and the cluster
// goes on (tree -Lo 2 OUT is -L 2 -o OUT). Long options as getopt_long.
func (v *verb) treeClusters() *verb {
	o := v.opts
	v.custom = func(args []arg) bool {
		if !allKnown(args) {
			return false
		}
		t := o.tab()
		for i := 0; i < len(args); i++ {
			w := args[i].v
			switch {
			case w == "--":
				// Only plain operands after it, whether or not tree honours it.
				for _, a := range args[i+1:] {
					if isOption(a) {
						return false
					}
				}
				return true
			case strings.HasPrefix(w, "--"):
				s := scanner{args: args, i: i + 1, strict: true}
				if !s.option(o, w) {
					return false
				}
				i = s.i - 1
			case len(w) > 1 && w[0] == '-':
				for j := 1; j < len(w); j++ {
					c := w[j]
					if c >= 128 || t.short[c] == none {
						return false
					}
					if t.short[c] == value {
						if i+1 >= len(args) || isOption(args[i+1]) {
							return false
						}
						i++
					}
				}
			}
		}
		return true
	}
	return v
}
