package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/internal/lazyre"
)

// normalizeArgs lets flags stand anywhere, as in gh and kubectl: urfave/cli
// stops at the first positional, so the command path (flower sessions show)
// goes first, then every flag with its value, then "--" and the positionals
// in their order. "--" ends the flags: everything after it is positional.
// `flower help X` becomes `flower X --help`; a first word that is a near
// miss of a command name is a usage error with a suggestion, never an ask.
func normalizeArgs(app *cli.App, args []string) ([]string, error) {
	if len(args) == 0 {
		return args, nil
	}
	takesValue := flagKinds(app)
	cmds := app.Commands
	var cmd *cli.Command
	var path, flags, pos []string
	dashdash, escaped := false, false // escaped: the first positional came after "--"
	rest := args[1:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case dashdash:
			escaped = escaped || len(pos) == 0
			pos = append(pos, a)
		case a == "--":
			dashdash = true
		case len(a) > 1 && a[0] == '-':
			flags = append(flags, a)
			if name := strings.TrimLeft(a, "-"); !strings.Contains(name, "=") && takesValue[name] && i+1 < len(rest) {
				i++
				flags = append(flags, rest[i])
			}
		case len(pos) == 0 && a == "help":
			again := append(append(append([]string{args[0]}, path...), flags...), rest[i+1:]...)
			return normalizeArgs(app, append(again, "--help"))
		case len(pos) == 0 && findCommand(cmds, a) != nil:
			cmd = findCommand(cmds, a)
			path, cmds = append(path, a), cmd.Subcommands
			if cmd.SkipFlagParsing { // flower claude: the rest is claude's, verbatim
				out := append(append([]string{args[0]}, flags...), path...)
				return append(out, rest[i+1:]...), nil
			}
		case len(pos) == 0:
			if err := unknownCommand(cmd, path, cmds, a, rest[i:]); err != nil {
				return nil, err
			}
			pos = append(pos, a)
		default:
			pos = append(pos, a)
		}
	}
	out := append(append([]string{args[0]}, path...), flags...)
	if slices.Contains(flags, "--help") || slices.Contains(flags, "-h") {
		return out, nil // help is about the command; positionals would be taken for a help topic
	}
	if cmd == nil && !escaped && len(pos) == 1 && strayWord(pos[0]) {
		return nil, strayWordError(app, pos[0])
	}
	if len(pos) > 0 {
		out = append(out, "--")
		if cmd == nil && findCommand(app.Commands, pos[0]) != nil {
			// urfave looks the first positional up as a command even after
			// "--"; an empty word in front keeps `flower -- runs` an ask
			// (the ask is the words joined and trimmed).
			out = append(out, "")
		}
		out = append(out, pos...)
	}
	return out, nil
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// aStrayWord is a lone first argument that reads as a command, not as an
// ask: printable ASCII without a space (status, init, logs, README.md). A
// word in another script (写个hello文件) is an ask: Chinese needs no spaces.
var aStrayWord = lazyre.New(`^[!-~]+$`)

// strayWord reports whether a lone first positional must not start a run:
// only a sentence (whitespace, or several words) or "-" (stdin) is an ask;
// `flower -- word` still asks one word.
func strayWord(w string) bool { return w != "-" && aStrayWord().MatchString(w) }

// strayWordError is the usage error of a lone word that is no command.
func strayWordError(app *cli.App, word string) error {
	return &usageError{msg: fmt.Sprintf("%q is not a command. To ask flower, write a sentence: flower \"…\"\ncommands: %s",
		word, strings.Join(visibleNames(app.Commands), ", ")), usage: `flower COMMAND …  or  flower "what you want"`}
}

// aWord is a first argument that could be a mistyped command: one short
// word, no spaces, nothing but letters and dashes.
var aWord = lazyre.New(`^[a-z][a-z-]{1,20}$`)

// unknownCommand decides about a first positional that names no command:
// a near miss of a (sub)command is a usage error with a suggestion; under a
// command that only groups subcommands, anything else is a usage error too.
// A word that is neither stays a positional (at the top, a one-word ask).
func unknownCommand(cmd *cli.Command, path []string, cmds []*cli.Command, word string, words []string) error {
	if len(cmds) == 0 {
		return nil
	}
	where := strings.Join(append([]string{"flower"}, path...), " ")
	if aWord().MatchString(word) {
		if s := suggest(word, visibleNames(cmds)); s != "" {
			msg := fmt.Sprintf("unknown command %q — did you mean %q?", where+" "+word, where+" "+s)
			if cmd == nil {
				msg += " (to ask it, write: " + shellJoin(append([]string{"flower", "--"}, words...)) + ")"
			}
			return &usageError{msg: msg, usage: where + " COMMAND …"}
		}
	}
	if cmd != nil && cmd.Action == nil {
		return &usageError{msg: fmt.Sprintf("unknown command %q (%s has: %s)", where+" "+word, where, strings.Join(visibleNames(cmds), ", ")),
			usage: where + " " + subcommandList(cmd)}
	}
	return nil
}

func visibleNames(cmds []*cli.Command) []string {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Name)
		}
	}
	return names
}

// suggest is the candidate nearest to word, if it is near enough to be a
// typo: one edit for short names, two for longer ones.
func suggest(word string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if d := editDistance(word, c); d < bestD {
			best, bestD = c, d
		}
	}
	limit := 1
	if len(best) > 4 {
		limit = 2
	}
	if bestD == 0 || bestD > limit {
		return ""
	}
	return best
}

// editDistance is the edit distance between a and b counting a swap of two
// neighbours as one edit (optimal string alignment), by bytes: command and
// flag names are ASCII.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// flagKinds maps every flag name in the app (any command, any alias) to
// whether it takes a value. A name means the same kind everywhere (a test
// holds this), so the map needs no command context.
func flagKinds(app *cli.App) map[string]bool {
	kinds := map[string]bool{"help": false, "h": false}
	var walk func(flags []cli.Flag, cmds []*cli.Command)
	walk = func(flags []cli.Flag, cmds []*cli.Command) {
		for _, f := range flags {
			for _, n := range f.Names() {
				kinds[n] = takesValue(f)
			}
		}
		for _, c := range cmds {
			walk(c.Flags, c.Subcommands)
		}
	}
	walk(app.Flags, app.Commands)
	return kinds
}

func takesValue(f cli.Flag) bool {
	dv, ok := f.(cli.DocGenerationFlag)
	return !ok || dv.TakesValue()
}

var (
	reUndefined = lazyre.New(`^flag provided but not defined: -+(.+)$`)
	reBadValue  = lazyre.New(`^invalid value "(.*)" for flag -+([^:]+): (.*)$`)
)

// explainFlagError rewrites the flag package's messages into flower's: a
// mistyped flag gets a suggestion, a bad duration says how to write one.
func explainFlagError(msg string, flags []cli.Flag) string {
	if m := reUndefined().FindStringSubmatch(msg); m != nil {
		var names []string
		for _, f := range flags {
			names = append(names, f.Names()...)
		}
		sort.Strings(names)
		out := "unknown flag " + dashed(m[1])
		if s := suggest(m[1], names); s != "" {
			out += " — did you mean " + dashed(s) + "?"
		}
		return out
	}
	if m := reBadValue().FindStringSubmatch(msg); m != nil {
		for _, f := range flags {
			if !slices.Contains(f.Names(), m[2]) {
				continue
			}
			if want := expected(f); want != "" {
				return fmt.Sprintf("%s %q is not %s", dashed(m[2]), m[1], want)
			}
		}
		return fmt.Sprintf("%s %q: %s", dashed(m[2]), m[1], strings.TrimSpace(strings.TrimPrefix(m[3], "parse error")))
	}
	return msg
}

// expected says what a flag's value must look like, for its error.
func expected(f cli.Flag) string {
	switch f.(type) {
	case *cli.DurationFlag:
		return "a duration: write 5s or 5m (0 for none)"
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag:
		return "a whole number, e.g. 3"
	case *cli.Float64Flag:
		return "a number, e.g. 0.5"
	case *cli.BoolFlag:
		return "true or false"
	}
	return ""
}

func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}
