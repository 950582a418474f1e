package glance

import (
	"strings"
)

// Toolchain reads: go list, go doc, go mod graph, npm ls, pip list/show,
// gofmt -l. Each is a fixed subcommand with an exact option list that
// leaves out every option that builds, writes, edits the module files or
// runs a tool (go list -export/-compiled/-toolexec/-mod/-modfile/-overlay,
// go doc -http, gofmt -w, npm's and pip's installers). They still run a
// program that reads the workspace's own files (go.mod's toolchain line,
// package.json, site-packages) and may fill a cache or ask the network:
// these reads rely on the read-only sandbox as a second layer (see
// docs/guards.md), where the classifier alone cannot prove them.

var (
	npmLsOpts   = &optSet{specs: []string{"-a -g -l -p --all --json --long --parseable --global --prod --production --dev --link --unicode --depth= --omit= --include= --package-lock-only --no-color --no-unicode"}}
	pipListOpts = &optSet{specs: []string{"-o -u -e -l -v -q --outdated --uptodate --editable --local --user --pre " +
		"--format= --not-required --exclude-editable --include-editable --exclude= --verbose --quiet " +
		"--disable-pip-version-check --no-color --no-index"}}
	pipShowOpts = &optSet{specs: []string{"-f -v -q --files --verbose --quiet --disable-pip-version-check --no-color"}}
)

// goRule: go version, go env [-json] [NAME…] (not -w, -u: they write the
// env file), go list, go doc, go mod graph.
func goRule(args []arg) bool {
	if !allKnown(args) || len(args) == 0 {
		return false
	}
	rest := args[1:]
	switch args[0].v {
	case "version":
		return len(rest) == 0
	case "env":
		for _, a := range rest {
			if a.v != "-json" && !isEnvName(a.v) {
				return false
			}
		}
		return true
	case "list":
		return goFlags(rest, "m e json deps find test versions retracted u", "f tags json", -1)
	case "doc":
		return goFlags(rest, "all c cmd short src u", "", 2)
	case "mod":
		return len(rest) > 0 && rest[0].v == "graph" && goFlags(rest[1:], "", "go", 0)
	}
	return false
}

// goFlags scans words as Go's flag package does: -name or --name, a value
// glued (-f=x) or, for a value flag, the next word; the first non-flag
// word (or "--") ends the flags. bools and values are blank-separated
// names; json is both (-json, -json=Fields). At most max operands (any
// number when max < 0), each plain.
func goFlags(args []arg, bools, values string, max int) bool {
	i := 0
	for ; i < len(args); i++ {
		w := args[i].v
		if w == "--" {
			i++
			break
		}
		if len(w) < 2 || w[0] != '-' {
			break
		}
		name, _, glued := strings.Cut(strings.TrimPrefix(w[1:], "-"), "=")
		switch {
		case inSet(values, name) && (glued || inSet(bools, name)):
		case inSet(values, name):
			if i+1 >= len(args) {
				return false
			}
			i++
		case inSet(bools, name) && !glued:
		default:
			return false
		}
	}
	ops := args[i:]
	return (max < 0 || len(ops) <= max) && allPlain(ops)
}

// npmRule: npm --version, npm ls|list with listing options.
func npmRule(args []arg) bool {
	if !allKnown(args) || len(args) == 0 {
		return false
	}
	switch args[0].v {
	case "--version", "-v":
		return len(args) == 1
	case "ls", "list":
		return plainOperands(npmLsOpts, args[1:], -1)
	}
	return false
}

// pipRule: pip --version, pip list, pip show PACKAGE….
func pipRule(args []arg) bool {
	if !allKnown(args) || len(args) == 0 {
		return false
	}
	switch args[0].v {
	case "--version", "-V":
		return len(args) == 1
	case "list":
		return plainOperands(pipListOpts, args[1:], 0)
	case "show":
		ops, ok := operands(pipShowOpts, args[1:])
		return ok && len(ops) > 0 && allPlain(ops)
	}
	return false
}

// plainOperands scans args with o and accepts at most max operands (any
// number when max < 0), none of which looks like an option, a remote
// (host:path) or a URL.
func plainOperands(o *optSet, args []arg, max int) bool {
	ops, ok := operands(o, args)
	return ok && (max < 0 || len(ops) <= max) && allPlain(ops)
}

func allPlain(ops []arg) bool {
	for _, a := range ops {
		if isOption(a) || strings.Contains(a.v, "://") {
			return false
		}
	}
	return true
}
