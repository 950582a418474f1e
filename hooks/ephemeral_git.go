package hooks

import "strings"

// gitReadOnly are the git subcommands that only read the repository. Some
// have a rule for the forms that would write (branch -D, stash push, …).
var gitReadOnly = map[string]verbRule{
	"status": nil, "diff": nil, "log": nil, "show": nil, "rev-parse": nil, "ls-files": nil,
	"ls-tree": nil, "blame": nil, "annotate": nil, "describe": nil, "shortlog": nil,
	"cat-file": nil, "rev-list": nil, "for-each-ref": nil, "name-rev": nil, "merge-base": nil,
	"count-objects": nil, "show-ref": nil, "var": nil, "check-ignore": nil, "check-attr": nil,
	"whatchanged": nil, "diff-tree": nil, "diff-files": nil, "diff-index": nil, "cherry": nil,
	"ls-remote": nil, "version": nil,
	"grep":      forbidFlags("-O", "--open-files-in-pager"),
	"branch":    gitListRule("arvl", "--list", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at"),
	"tag":       gitListRule("ln0123456789i", "--list", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at"),
	"stash":     firstIn("list", "show"),
	"worktree":  firstIn("list"),
	"notes":     firstIn("list", "show"),
	"remote":    gitRemoteRule,
	"config":    gitConfigRule,
	"reflog":    gitReflogRule,
	"submodule": gitSubmoduleRule,
}

// gitForbidden are options that, on any subcommand, force, reset, prune,
// write a file or run another program.
var gitForbidden = []string{"--force", "--hard", "--prune", "--output", "--ext-diff", "--upload-pack",
	"--receive-pack", "--exec", "--open-files-in-pager", "--edit", "--delete", "--move", "--copy",
	"--set-upstream-to", "--unset-upstream", "--edit-description", "--track", "--create-reflog"}

// gitRule accepts `git [global options] SUBCOMMAND args` for a read-only
// subcommand. Global options are limited to -C DIR, --no-pager and a few
// switches: -c, --exec-path=, --config-env and friends can make git run any
// program (core.pager, core.fsmonitor, diff.external).
func gitRule(args []arg) bool {
	if !allKnown(args) {
		return false
	}
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i].v, "-"); i++ {
		switch args[i].v {
		case "-C":
			i++
		case "--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--no-replace-objects":
		case "--version", "--exec-path", "--html-path", "--man-path", "--info-path":
			return i == len(args)-1
		default:
			return false
		}
	}
	if i >= len(args) {
		return false
	}
	rule, ok := gitReadOnly[args[i].v]
	if !ok {
		return false
	}
	rest := args[i+1:]
	for _, a := range rest {
		if a.v == "--" {
			break
		}
		for _, f := range gitForbidden {
			if a.v == f || strings.HasPrefix(a.v, f+"=") || strings.HasPrefix(a.v, f+"-") {
				return false
			}
		}
	}
	return rule == nil || rule(rest)
}

// gitListRule accepts the listing forms of git branch / git tag: only the
// short flags in shortOK, long flags that only filter or format, and
// positionals (patterns) only once a listing flag was given (git branch X
// creates X; git tag X tags). -d/-D/-m/-M/-c/-C/-f/-u are therefore out.
func gitListRule(shortOK string, listFlags ...string) verbRule {
	return func(args []arg) bool {
		listing, positional := false, false
		for i := 0; i < len(args); i++ {
			a := args[i].v
			switch {
			case a == "--":
				positional = positional || i+1 < len(args)
				i = len(args)
			case a == "-l" || a == "--list":
				listing = true
			case contains(listFlags, a):
				listing = true
				i++ // the commit operand
			case strings.HasPrefix(a, "--"):
				name := a
				if j := strings.IndexByte(a, '='); j >= 0 {
					name = a[:j]
				}
				if contains(listFlags, name) {
					listing = true
					continue
				}
				if !contains(gitListLong, name) {
					return false
				}
			case strings.HasPrefix(a, "-") && len(a) > 1:
				for _, c := range a[1:] {
					if !strings.ContainsRune(shortOK+"v", c) {
						return false
					}
					if c == 'l' {
						listing = true
					}
				}
			default:
				positional = true
			}
		}
		return !positional || listing
	}
}

// gitListLong are long options of branch/tag that only change what is shown.
var gitListLong = []string{"--all", "--remotes", "--verbose", "--show-current", "--sort", "--format",
	"--color", "--no-color", "--column", "--no-column", "--abbrev", "--no-abbrev", "--ignore-case",
	"--omit-empty", "--quiet"}

// firstIn accepts a subcommand whose first argument is one of subs.
func firstIn(subs ...string) verbRule {
	return func(args []arg) bool { return len(args) > 0 && contains(subs, args[0].v) }
}

func gitRemoteRule(args []arg) bool {
	return len(args) == 0 || contains([]string{"-v", "--verbose", "show", "get-url"}, args[0].v)
}

func gitSubmoduleRule(args []arg) bool {
	return len(args) == 0 || contains([]string{"status", "summary"}, args[0].v)
}

func gitReflogRule(args []arg) bool {
	for _, a := range args {
		if a.v == "expire" || a.v == "delete" {
			return false
		}
	}
	return true
}

// gitConfigRule accepts only the reading forms of git config.
func gitConfigRule(args []arg) bool {
	read := false
	for _, a := range args {
		switch a.v {
		case "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "get", "list":
			read = true
		case "--add", "--unset", "--unset-all", "--replace-all", "--rename-section", "--remove-section",
			"-e", "set", "unset", "rename-section", "remove-section", "edit":
			return false
		}
	}
	return read
}

// sedRule accepts sed without -i/-f whose script (from -e or the first
// operand) passes sedScriptSafe.
func sedRule(args []arg) bool {
	if !allKnown(args) {
		return false
	}
	var scripts []string
	haveE := false
	firstOperand := -1
	for i := 0; i < len(args); i++ {
		a := args[i].v
		switch {
		case a == "--":
			if !haveE && i+1 < len(args) {
				firstOperand = i + 1
			}
			i = len(args)
		case a == "-e" || a == "--expression":
			if i+1 >= len(args) {
				return false
			}
			scripts, haveE = append(scripts, args[i+1].v), true
			i++
		case strings.HasPrefix(a, "--expression="):
			scripts, haveE = append(scripts, strings.TrimPrefix(a, "--expression=")), true
		case strings.HasPrefix(a, "--"):
			if !contains([]string{"--quiet", "--silent", "--regexp-extended", "--separate", "--unbuffered",
				"--null-data", "--posix", "--debug", "--sandbox"}, a) {
				return false
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				switch c := a[j]; c {
				case 'n', 'E', 'r', 's', 'u', 'z':
				case 'e':
					if j+1 < len(a) {
						scripts = append(scripts, a[j+1:])
					} else if i+1 < len(args) {
						i++
						scripts = append(scripts, args[i].v)
					} else {
						return false
					}
					haveE, j = true, len(a)
				default:
					return false // -i (in place), -f (script file), -l, …
				}
			}
		default:
			if !haveE && firstOperand < 0 {
				firstOperand = i
			}
		}
	}
	if !haveE {
		if firstOperand < 0 {
			return false
		}
		scripts = append(scripts, args[firstOperand].v)
	}
	for _, s := range scripts {
		if !sedScriptSafe(s) {
			return false
		}
	}
	return true
}

// sedScriptSafe scans a sed script command by command and accepts only
// commands that print, delete, branch or substitute into the pattern space:
// no w/W (write a file), e (execute), r/R (read other files), and no s///
// flags other than g, p, i, I, m, M and a number (s///w FILE, s///e).
func sedScriptSafe(s string) bool {
	i := 0
	for i < len(s) {
		i = skipSedAddress(s, i)
		if i < 0 {
			return false
		}
		if i >= len(s) {
			return true
		}
		c := s[i]
		i++
		switch c {
		case ';', '\n', ' ', '\t', '{', '}', '=', 'p', 'P', 'd', 'D', 'q', 'Q', 'l', 'n', 'N', 'g', 'G', 'h', 'H', 'x', 'z', 'F':
		case 'b', 't', 'T', ':', '#':
			for i < len(s) && s[i] != ';' && s[i] != '\n' {
				i++
			}
		case 'a', 'i', 'c':
			for i < len(s) && s[i] != '\n' {
				if s[i] == '\\' {
					i++
				}
				i++
			}
		case 's', 'y':
			var ok bool
			if i, ok = skipSedDelimited(s, i, 2); !ok {
				return false
			}
			if c == 's' {
				for i < len(s) && strings.IndexByte("gpiImM0123456789", s[i]) >= 0 {
					i++
				}
				if i < len(s) && strings.IndexByte("; \t\n}", s[i]) < 0 {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// skipSedAddress skips blanks, an address or address range and a "!".
// It returns -1 on a malformed regex address.
func skipSedAddress(s string, i int) int {
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == ',' || c == '!' || c == '$' || c == '~' || c == '+' || (c >= '0' && c <= '9'):
			i++
		case c == '/':
			j, ok := skipSedDelimited(s, i, 1)
			if !ok {
				return -1
			}
			i = j
			for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		case c == '\\' && i+1 < len(s):
			j, ok := skipSedDelimited(s, i+1, 1)
			if !ok {
				return -1
			}
			i = j
		default:
			return i
		}
	}
	return i
}

// skipSedDelimited skips n delimited fields starting at the delimiter s[i]
// (for s/a/b/ n=2 starting at the first "/"), honouring backslash escapes.
func skipSedDelimited(s string, i, n int) (int, bool) {
	if i >= len(s) || s[i] == '\n' || s[i] == '\\' {
		return 0, false
	}
	d := s[i]
	i++
	for ; n > 0; n-- {
		for i < len(s) && s[i] != d {
			if s[i] == '\\' {
				i++
			}
			i++
		}
		if i >= len(s) {
			return 0, false
		}
		i++
	}
	return i, true
}
