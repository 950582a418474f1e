package hooks

import (
	"regexp"
	"strings"
	"sync"
)

// verbRule checks the arguments (after the verb) of a whitelisted verb. A
// nil rule accepts any arguments: the verb has no option that writes a file,
// changes the system or runs another program.
type verbRule func(args []arg) bool

// verbs is the read-only whitelist, in the seed's groups. Verbs that are not
// here (xargs, exec, eval, source, ., tee, cd, sudo, env with a command,
// timeout, nice, …) are never ephemeral.
var verbs map[string]verbRule

func init() {
	verbs = map[string]verbRule{}
	add := func(rule verbRule, names ...string) {
		for _, n := range names {
			verbs[n] = rule
		}
	}
	// Read-only git subcommands.
	add(gitRule, "git")
	// Directory and system information.
	add(nil, "ls", "pwd", "df", "du", "whoami", "id", "uname", "uptime", "printenv", "groups",
		"nproc", "free", "lscpu", "lsblk", "arch", "locale", "tty", "who", "w", "getconf",
		"vmstat", "netstat", "findmnt", "lsb_release")
	add(dateRule, "date")
	add(envRule, "env")
	add(hostnameRule, "hostname")
	add(forbidFlags("-c", "-C", "--clear", "--read-clear", "-n", "--console-level", "-D", "-E", "--console-off", "--console-on"), "dmesg")
	add(noArgsOr("-l"), "mount")
	add(noArgsOr("-a", "-s"), "ifconfig")
	add(ipRule, "ip")
	add(forbidFlags("-K", "--kill", "-D", "--diag"), "ss")
	// Processes and containers.
	add(nil, "ps", "top", "pgrep", "pidof", "lsof", "jobs")
	add(containerRule, "docker", "podman")
	add(kubectlRule, "kubectl", "oc")
	// Viewing files.
	add(nil, "cat", "head", "tail", "wc", "stat", "nl", "od", "hexdump", "strings",
		"readlink", "realpath", "basename", "dirname", "md5sum", "sha1sum", "sha256sum",
		"sha512sum", "cksum", "b2sum")
	add(findRule, "find")
	add(forbidFlags("-o", "-R"), "tree")
	add(forbidFlags("-C", "--compile"), "file")
	add(forbidFlags("-x", "--exec", "-X", "--exec-batch"), "fd", "fdfind")
	// Looking up paths.
	add(nil, "which", "whereis", "type", "locate")
	add(commandRule, "command")
	// Text processing.
	add(forbidFlags("--pager"), "ag")
	add(nil, "grep", "egrep", "fgrep", "cut", "tr", "diff", "cmp", "comm", "column",
		"fold", "fmt", "paste", "join", "rev", "tac", "expand", "unexpand", "jq", "echo",
		"true", "false", "test", "[", "seq", "base64")
	add(forbidFlags("--pre", "--hostname-bin"), "rg")
	add(forbidFlags("-o", "--output", "--compress-program"), "sort")
	add(forbidFlags("-o", "--output"), "iconv")
	add(forbidFlags("-i", "--inplace", "-s", "--split-exp"), "yq")
	add(forbidFlags("-v"), "printf")
	add(uniqRule, "uniq")
	add(sedRule, "sed")
	add(awkRule, "awk", "gawk", "mawk", "nawk")
}

// allKnown reports whether every argument's value is known before
// expansion. Rules that look for dangerous options require it, since an
// unknown word could expand to one.
func allKnown(args []arg) bool {
	for _, a := range args {
		if !a.known {
			return false
		}
	}
	return true
}

// forbidFlags accepts known arguments none of which is one of flags, in
// its exact, "=value", clustered (-ro) or glued (-oFILE) form.
func forbidFlags(flags ...string) verbRule {
	return func(args []arg) bool {
		if !allKnown(args) {
			return false
		}
		for _, a := range args {
			if a.v == "--" {
				return true
			}
			for _, f := range flags {
				if a.v == f || strings.HasPrefix(a.v, f+"=") || shortIn(a.v, f) {
					return false
				}
			}
		}
		return true
	}
}

// shortIn reports whether the short flag f (like "-o") is set by a, alone,
// in a cluster (-ro) or with a glued value (-oFILE).
func shortIn(a, f string) bool {
	return len(f) == 2 && len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a[1:], f[1]) >= 0
}

// noArgsOr accepts no arguments or only the given ones.
func noArgsOr(ok ...string) verbRule {
	return func(args []arg) bool {
		for _, a := range args {
			if !a.known || !contains(ok, a.v) {
				return false
			}
		}
		return true
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// envRule: env alone prints the environment; env with anything else runs a
// command under a changed environment.
func envRule(args []arg) bool { return noArgsOr("-0", "--null")(args) }

// commandRule: only the lookup forms, command -v / -V.
func commandRule(args []arg) bool {
	return len(args) >= 2 && allKnown(args) && (args[0].v == "-v" || args[0].v == "-V")
}

// dateRule rejects setting the clock: -s/--set, or a positional that is not
// a +FORMAT (date MMDDhhmm sets the time).
func dateRule(args []arg) bool {
	if !allKnown(args) {
		return false
	}
	for i := 0; i < len(args); i++ {
		a := args[i].v
		switch {
		case a == "-s" || a == "--set" || strings.HasPrefix(a, "--set=") || (strings.HasPrefix(a, "-s") && !strings.HasPrefix(a, "--")):
			return false
		case a == "-d" || a == "--date" || a == "-f" || a == "--file" || a == "-r" || a == "--reference":
			i++
		case strings.HasPrefix(a, "-"):
		case strings.HasPrefix(a, "+"):
		default:
			return false
		}
	}
	return true
}

var hostnameFlags = []string{"-s", "-f", "-d", "-i", "-I", "-a", "-A", "-y", "--short", "--fqdn", "--long",
	"--domain", "--ip-address", "--all-ip-addresses", "--all-fqdns", "--alias", "-V", "--version", "-h", "--help"}

// hostnameRule: hostname NAME and hostname -F FILE set the host name.
func hostnameRule(args []arg) bool { return noArgsOr(hostnameFlags...)(args) }

var ipWords = map[string]bool{"-4": true, "-6": true, "-br": true, "-brief": true, "-c": true, "-color": true,
	"-s": true, "-d": true, "-j": true, "-json": true, "-p": true, "-o": true, "addr": true, "address": true,
	"a": true, "route": true, "r": true, "ro": true, "link": true, "l": true, "neigh": true, "neighbour": true,
	"n": true, "rule": true, "ru": true, "maddr": true, "m": true, "show": true, "list": true, "ls": true,
	"lst": true, "all": true, "main": true, "up": true, "help": true, "-h": true}

// ipRule accepts the show/list forms of ip; a device or table name may
// follow "dev" or "table".
func ipRule(args []arg) bool {
	if len(args) == 0 || !allKnown(args) {
		return false
	}
	for i := 0; i < len(args); i++ {
		switch a := args[i].v; {
		case a == "dev" || a == "table":
			i++
		case !ipWords[a]:
			return false
		}
	}
	return true
}

var containerSubs = map[string][]string{
	"ps": nil, "images": nil, "version": nil, "info": nil, "inspect": nil, "logs": nil, "stats": nil,
	"top": nil, "port": nil, "diff": nil, "history": nil, "events": nil,
	"container": {"ls", "ps", "list", "inspect", "logs", "top", "port", "diff", "stats"},
	"image":     {"ls", "list", "inspect", "history"},
	"network":   {"ls", "list", "inspect"},
	"volume":    {"ls", "list", "inspect"},
	"compose":   {"ps", "ls", "logs", "config", "images", "top", "version"},
	"system":    {"df", "info"},
	"context":   {"ls", "list", "show", "inspect"},
}

// containerRule accepts docker/podman listing and inspection subcommands.
func containerRule(args []arg) bool {
	if len(args) == 0 || !allKnown(args) {
		return false
	}
	sub, ok := containerSubs[args[0].v]
	if !ok {
		return false
	}
	if sub == nil {
		return true
	}
	for _, a := range args[1:] {
		if strings.HasPrefix(a.v, "-") {
			continue
		}
		return contains(sub, a.v)
	}
	return args[0].v == "compose" // bare "docker container" etc. only print help
}

var kubectlSubs = map[string][]string{
	"get": nil, "describe": nil, "logs": nil, "top": nil, "version": nil, "explain": nil,
	"api-resources": nil, "api-versions": nil, "cluster-info": nil, "events": nil,
	"config": {"view", "get-contexts", "current-context", "get-clusters", "get-users"},
	"auth":   {"can-i", "whoami"},
}

// kubectlRule accepts kubectl's read verbs; the first positional is the verb.
func kubectlRule(args []arg) bool {
	if !allKnown(args) {
		return false
	}
	for i, a := range args {
		if strings.HasPrefix(a.v, "-") {
			continue
		}
		sub, ok := kubectlSubs[a.v]
		if !ok {
			return false
		}
		if sub == nil {
			return true
		}
		for _, b := range args[i+1:] {
			if !strings.HasPrefix(b.v, "-") {
				return contains(sub, b.v)
			}
		}
		return false
	}
	return false
}

var findActions = []string{"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"}

// findRule rejects find's actions that delete, write files or run programs.
func findRule(args []arg) bool {
	if !allKnown(args) {
		return false
	}
	for _, a := range args {
		if contains(findActions, a.v) {
			return false
		}
	}
	return true
}

// uniqRule: uniq IN OUT writes OUT, so at most one file operand.
func uniqRule(args []arg) bool {
	if !allKnown(args) {
		return false
	}
	files := 0
	for i := 0; i < len(args); i++ {
		a := args[i].v
		switch {
		case a == "-f" || a == "-s" || a == "-w":
			i++
		case strings.HasPrefix(a, "-") && a != "-":
		default:
			files++
		}
	}
	return files <= 1
}

// awkRule accepts an inline program that neither runs commands (system(),
// pipes, getline from commands) nor writes files (print > FILE), given
// without -f/-i/-l/-E (programs or extensions from files we cannot read).
func awkRule(args []arg) bool {
	if !allKnown(args) {
		return false
	}
	for i := 0; i < len(args); i++ {
		a := args[i].v
		switch {
		case a == "-F" || a == "-v":
			i++
		case strings.HasPrefix(a, "-F") || strings.HasPrefix(a, "-v") && len(a) > 2:
		case a == "--":
			return i+1 < len(args) && awkProgramSafe(args[i+1].v)
		case strings.HasPrefix(a, "-"):
			return false
		default:
			return awkProgramSafe(a)
		}
	}
	return false
}

// awkRedirect finds print/printf redirected to a file (compiled on first use).
var awkRedirect = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bprintf?\b[^;{}\n]*>`) })

func awkProgramSafe(p string) bool {
	if strings.Contains(p, "system") || strings.Contains(p, "getline") || strings.Contains(p, "@") {
		return false
	}
	if strings.Contains(strings.ReplaceAll(p, "||", ""), "|") {
		return false
	}
	return !awkRedirect().MatchString(p)
}
