package glance

import (
	"strings"
)

// Everyday reads with a fixed shape: toolchain version queries, archive
// listings, service status, network listings, certificate and key
// fingerprints. Each is an exact form, never a whole program: `go version`
// is a glance, `go run` is not; `tar -tf` lists, `tar -xf` does not.

// exactly accepts argv that is one of forms (each a blank-separated list).
func exactly(forms ...string) *verb {
	return &verb{custom: func(args []arg) bool {
		if !allKnown(args) {
			return false
		}
		got := strings.Join(values(args), " ")
		for _, f := range forms {
			if got == f {
				return true
			}
		}
		return false
	}}
}

func addReadForms() {
	// Not yarn or pnpm (a project's yarnPath or packageManager runs the
	// project's own copy), not mvn or gradle (.mvn/extensions.xml loads).
	add(exactly("--version", "-v"), "node", "npx", "bun", "deno")
	add(exactly("--version", "-V"), "python", "python3", "rustc", "cargo", "rustup", "poetry", "uv")
	add(exactly("--version"), "aws", "gh")
	add(&verb{custom: npmRule}, "npm")
	add(&verb{custom: pipRule}, "pip", "pip3")
	add(strict("-ldes -r:"+helpVersion).files0(), "gofmt")
	add(exactly("-version", "--version"), "java", "javac")
	add(exactly("--version"), "gcc", "g++", "cc", "c++", "clang", "clang++", "make", "cmake", "ninja", "ld",
		"as", "dotnet", "tsc", "zig", "swift", "ghc")
	add(exactly("--version", "-v"), "ruby", "php", "perl")
	add(exactly("version", "-version", "--version"), "terraform")
	add(&verb{custom: goRule}, "go")
	add(&verb{custom: tarRule}, "tar")
	add(&verb{custom: unzipRule}, "unzip")
	add(strict("-12shmlvtTz --help").files0(), "zipinfo")
	add(strict("-l --list -v --verbose").withOperands(func(ops []arg) bool { return len(ops) > 0 }).requires("-l", "--list"), "gzip")
	// Strict: an unknown word could reach the compressor as an option
	// (zstd -o FILE writes, xz --files=FILE reads a list).
	add(strict("-fqv --force --quiet --verbose"+helpVersion).files0(), "zcat", "xzcat", "bzcat", "zstdcat", "lzcat")
	add(&verb{custom: xxdRule}, "xxd")
	add(&verb{custom: helmRule}, "helm")
	add(&verb{custom: systemctlRule}, "systemctl")
	add(strict("-fkarqxe -u: -n: -p: -o: -t: -g: -b? -S: -U: --unit= --user-unit= --lines= --priority= --output= "+
		"--identifier= --grep= --boot=? --since= --until= --follow --dmesg --reverse --quiet --catalog --pager-end "+
		"--no-hostname --utc --all --no-full --full --user --system --list-boots --disk-usage --no-tail "+
		"--case-sensitive=? --output-fields= --facility= --no-pager"+helpVersion).requires("--no-pager"), "journalctl")
	add(&verb{custom: ipRule}, "ip")
	add(strict("-tulpnaeimorsxwHOE46 -A: -f: --tcp --udp --listening --processes --numeric --all --extended "+
		"--memory --info --options --summary --unix --raw --no-header --ipv4 --ipv6 --family= --query= "+
		"--oneline --resolve"+helpVersion), "ss")
	add(exactly("-a", "-Sa", "-Ha", "-aS", "-aH"), "ulimit")
	add(exactly("", "-S", "-p"), "umask")
	add(strict("-i --no-idn"+helpVersion).withOperands(getentDB), "getent")
	add(&verb{custom: opensslRule}, "openssl")
	add(&verb{custom: sshKeygenRule}, "ssh-keygen")
}

// files0 marks a strict verb whose operands are plain files.
func (v *verb) files0() *verb { v.files = true; return v }

// requires: the verb is accepted only when one of the options is given
// (gzip lists only with -l; journalctl must not start a pager).
func (v *verb) requires(opts ...string) *verb {
	inner := *v
	v.custom = func(args []arg) bool {
		for _, a := range args {
			if a.known && contains(opts, a.v) {
				return inner.accepts(args)
			}
		}
		return false
	}
	return v
}

// xxdRule: a hex dump to stdout. xxd takes single-dash options, some with
// a value; -r turns a dump back into binary, and a second operand is an
// output file: both are out.
const xxdFlags = ("-p -ps -plain -postscript -i -include -u -b -bits -e -C -capitalize -a -autoskip " +
	"-E -EBCDIC -d")
const xxdValues = ("-c -cols -g -groupsize -l -len -s -seek -o -offset -n -name")

func xxdRule(args []arg) bool {
	if !allKnown(args) {
		return false
	}
	files := 0
	for i := 0; i < len(args); i++ {
		a := args[i].v
		switch {
		case inSet(xxdFlags, a):
		case inSet(xxdValues, a) && i+1 < len(args):
			i++
		case len(a) > 2 && inSet(xxdValues, a[:2]) && a[:2] != "-n":
			// a glued number: -c16, -l64
		case isOption(args[i]):
			return false
		default:
			files++
		}
	}
	return files <= 1
}

// helmRule: helm list|ls|version|status|history|get values (reads of the
// release store). --kubeconfig is out (an exec credential plugin), as is
// any other subcommand (install, upgrade, plugins: helm runs them).
const helmGlobal = "-n: --namespace= --kube-context= --debug --burst-limit= --qps="

var helmSubs map[string]*optSet // built by loadTables

func helmTable() map[string]*optSet {
	return map[string]*optSet{
		"list": opts(helmGlobal, "-aAqrdm: -o: -f: -l: --all --all-namespaces --short --reverse --date --max= "+
			"--output= --filter= --selector= --deployed --failed --pending --uninstalled --superseded "+
			"--uninstalling --no-headers --time-format= --offset="),
		"version": opts(helmGlobal, "-c --short --template= --client"),
		"status":  opts(helmGlobal, "-o: --output= --revision= --show-desc --show-resources"),
		"history": opts(helmGlobal, "-o: --output= --max="),
	}
}

func helmRule(args []arg) bool {
	if !allKnown(args) {
		return false
	}
	s := scanner{args: args, strict: true}
	sub, ok := s.sub(opts(helmGlobal))
	if !ok {
		return false
	}
	if sub == "ls" {
		sub = "list"
	}
	o, found := helmSubs[sub]
	if !found {
		return false
	}
	rest := append(append([]arg{}, args[:s.i-1]...), args[s.i:]...)
	ops, ok := operands(o, rest)
	return ok && (sub != "version" && sub != "list" || len(ops) == 0)
}

func isEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c == '_' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// tarRule: listing only. The first word is a cluster (dash or old style)
// of t (list) with v, z, j, J and a final f that takes the archive; or
// --list / -t with -f/--file=. Member names may follow. Anything that
// extracts, creates, runs a program (-I, --to-command, --use-compress-
// program) or reads options from elsewhere is out.
func tarRule(args []arg) bool {
	if !allKnown(args) || len(args) < 2 {
		return false
	}
	cluster := strings.TrimPrefix(args[0].v, "-")
	if cluster == "" || strings.HasPrefix(cluster, "-") || !strings.ContainsRune(cluster, 't') {
		return false
	}
	for i, c := range cluster {
		if !strings.ContainsRune("tvzjJf", c) || c == 'f' && i != len(cluster)-1 {
			return false
		}
	}
	if !strings.HasSuffix(cluster, "f") {
		return false
	}
	for _, a := range args[2:] {
		if isOption(a) {
			return false
		}
	}
	// An archive name with a colon is host:file: tar runs rsh or ssh.
	return !isOption(args[1]) && !strings.Contains(args[1].v, ":")
}

// unzipRule: unzip -l / -lv / -v / -Z[1…] lists; plain unzip extracts.
func unzipRule(args []arg) bool {
	if !allKnown(args) || len(args) < 2 {
		return false
	}
	switch args[0].v {
	case "-l", "-lv", "-v", "-Z", "-Z1", "-Zl", "-Zv":
	default:
		return false
	}
	for _, a := range args[1:] {
		if isOption(a) {
			return false
		}
	}
	return true
}

// systemctlRule: status and listing verbs, with --no-pager wherever a
// pager could start; is-active/is-enabled/is-failed print one word.
var systemctlOpts = &optSet{specs: []string{"-alq -n: -o: -t: --all --full --lines= --output= --type= --state= --user --system " +
	"--plain --no-legend --quiet --no-pager --value -p: --property="}}

func systemctlRule(args []arg) bool {
	if !allKnown(args) {
		return false
	}
	ops, ok := operands(systemctlOpts, args)
	if !ok || len(ops) == 0 {
		return false
	}
	switch ops[0].v {
	case "is-active", "is-enabled", "is-failed":
		return len(ops) > 1
	case "status", "list-units", "list-unit-files", "list-timers", "list-sockets", "show", "cat":
		for _, a := range args {
			if a.v == "--no-pager" {
				return true
			}
		}
	}
	return false
}

// ipRule: ip [listing options] OBJECT [show|list|ls [filters…]]. -b/-batch,
// -n/-netns and -force are out; so are the objects' change verbs.
var ipOptions = []string{"-br", "-brief", "-4", "-6", "-c", "-color", "--color", "-s", "-stats", "-d", "-details",
	"-j", "-json", "-p", "-pretty", "-o", "-oneline", "-h", "-human"}

const ipObjects = ("addr address a link l route r ro neigh neighbor n rule ru maddr m tunnel t")

const ipChanges = ("add del delete set change replace flush save restore append prepend exec")

func ipRule(args []arg) bool {
	if !allKnown(args) {
		return false
	}
	i := 0
	for i < len(args) && contains(ipOptions, args[i].v) {
		i++
	}
	if i >= len(args) || !inSet(ipObjects, args[i].v) {
		return false
	}
	rest := args[i+1:]
	if len(rest) == 0 {
		return true
	}
	switch rest[0].v {
	case "show", "list", "ls", "lst", "sh", "get":
	default:
		return false
	}
	for _, a := range rest[1:] {
		if inSet(ipChanges, a.v) || isOption(a) {
			return false
		}
	}
	return true
}

// getentDB: getent DATABASE [KEY…] for the usual databases.
func getentDB(ops []arg) bool {
	if len(ops) == 0 {
		return false
	}
	switch ops[0].v {
	case "hosts", "ahosts", "ahostsv4", "ahostsv6", "passwd", "group", "services", "protocols", "networks",
		"netgroup", "ethers", "rpc", "shadow", "gshadow", "initgroups", "aliases":
		return true
	}
	return false
}

// opensslRule: openssl version [flags] and openssl x509 with -noout and
// printing options only (no -out, -signkey, -req, -engine, -passin …).
const x509Flags = ("-noout -text -subject -issuer -dates -enddate -startdate -serial -fingerprint " +
	"-sha256 -sha1 -md5 -pubkey -modulus -email -purpose -hash -subject_hash -issuer_hash -ocspid -ocsp_uri " +
	"-alias -nocert -ext_all")
const x509Values = ("-in -inform -nameopt -ext -checkend -certopt -dateopt")

func opensslRule(args []arg) bool {
	if !allKnown(args) || len(args) == 0 {
		return false
	}
	switch args[0].v {
	case "version":
		for _, a := range args[1:] {
			if len(a.v) != 2 || a.v[0] != '-' || !strings.ContainsRune("avbofpdemrc", rune(a.v[1])) {
				return false
			}
		}
		return true
	case "x509":
		noout := false
		for i := 1; i < len(args); i++ {
			a := args[i].v
			switch {
			case inSet(x509Flags, a):
				noout = noout || a == "-noout"
			case inSet(x509Values, a) && i+1 < len(args) && !isOption(args[i+1]):
				i++
			default:
				return false
			}
		}
		return noout
	}
	return false
}

// sshKeygenRule: ssh-keygen -l [-v] [-E md5|sha256] -f FILE (a
// fingerprint); any other ssh-keygen makes or changes keys.
func sshKeygenRule(args []arg) bool {
	for i, a := range args {
		// The key file may be one in the user's home (~/.ssh/id_ed25519.pub):
		// a single field (pathOK already pinned it under ~/, no "..").
		if !a.known && !(a.tilde && !a.multi && i > 0 && strings.HasSuffix(args[i-1].v, "f")) {
			return false
		}
	}
	list, file := false, false
	for i := 0; i < len(args); i++ {
		a := args[i].v
		if a == "-E" {
			if i+1 >= len(args) || args[i+1].v != "md5" && args[i+1].v != "sha256" {
				return false
			}
			i++
			continue
		}
		if len(a) < 2 || a[0] != '-' {
			return false
		}
		for j := 1; j < len(a); j++ {
			switch a[j] {
			case 'l':
				list = true
			case 'v':
			case 'f':
				if j != len(a)-1 || i+1 >= len(args) || isOption(args[i+1]) {
					return false
				}
				file = true
				i++
			default:
				return false
			}
		}
	}
	return list && file
}

// inSet reports whether w is one of the blank-separated words of set (a
// constant: no table is built at start).
func inSet(set, w string) bool {
	if w == "" || strings.IndexByte(w, ' ') >= 0 {
		return false
	}
	for set != "" {
		var f string
		f, set, _ = strings.Cut(set, " ")
		if f == w {
			return true
		}
	}
	return false
}
