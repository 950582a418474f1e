package glance

import (
	"strings"
)

// Container CLIs (docker, podman): global options, then a subcommand from
// containerSubs (or a management command and its read sub-subcommand),
// each with its exact options. --config is not a global option here: a
// config directory names credential helpers and CLI plugins to run. Nor
// are -H/--host and -c/--context: an ssh:// host (or a context that names
// one) makes the CLI run ssh, so a glance talks to the local daemon only.
var containerGlobal = &optSet{specs: []string{"-D -l: --debug --log-level="}}

const ctrFormat = "-f: --format="

var (
	ctrPs      = &optSet{specs: []string{ctrFormat, "-aqls -n: --all --quiet --latest --size --last= --no-trunc --filter= --external"}}
	ctrImages  = &optSet{specs: []string{ctrFormat, "-aq --all --quiet --digests --no-trunc --filter= --tree"}}
	ctrLogs    = &optSet{specs: []string{"-ft -n: --follow --timestamps --tail= --since= --until= --details --color --no-color --names"}}
	ctrInspect = &optSet{specs: []string{ctrFormat, "-s --size --type="}}
	ctrStats   = &optSet{specs: []string{ctrFormat, "-a --all --no-stream --no-trunc"}}
	ctrHistory = &optSet{specs: []string{ctrFormat, "-Hq --human --no-trunc --quiet"}}
	ctrEvents  = &optSet{specs: []string{ctrFormat, "--since= --until= --filter="}}
	ctrVersion = &optSet{specs: []string{ctrFormat}}
	ctrTop     = &optSet{specs: []string{}}
	ctrLs      = &optSet{specs: []string{ctrFormat, "-aq --all --quiet --filter= --no-trunc"}}
	ctrCompose = &optSet{specs: []string{"-f: -p: --file= --project-name= --project-directory= --profile= --env-file= --ansi= " +
		"--all-resources --parallel="}}
	ctrDfOpts = &optSet{specs: []string{ctrFormat, "-v --verbose"}}
)

type subs map[string]*optSet

// containerSubs and containerGroups are built by loadTables.
var (
	containerSubs   subs
	containerGroups map[string]subs
)

func containerTables() (subs, map[string]subs) {
	return subs{
			"ps": ctrPs, "images": ctrImages, "version": ctrVersion, "info": ctrVersion, "inspect": ctrInspect,
			"logs": ctrLogs, "stats": ctrStats, "top": ctrTop, "port": ctrTop, "diff": ctrTop,
			"history": ctrHistory, "events": ctrEvents,
		}, map[string]subs{
			"container": {"ls": ctrPs, "ps": ctrPs, "list": ctrPs, "inspect": ctrInspect, "logs": ctrLogs, "top": ctrTop,
				"port": ctrTop, "diff": ctrTop, "stats": ctrStats},
			"image":   {"ls": ctrImages, "list": ctrImages, "inspect": ctrInspect, "history": ctrHistory},
			"network": {"ls": ctrLs, "list": ctrLs, "inspect": ctrInspect},
			"volume":  {"ls": ctrLs, "list": ctrLs, "inspect": ctrInspect},
			"context": {"ls": ctrLs, "list": ctrLs, "inspect": ctrInspect, "show": ctrVersion},
			"system":  {"df": ctrDfOpts, "info": ctrVersion},
			// compose: only the forms that load no project file. A compose file's
			// include: (or a remote -f) makes compose run git, and a glance cannot
			// see the file: ps, logs, config, images and top are out.
			"compose": {"ls": opts(ctrFormat, "-aq --all --quiet --filter="), "version": opts(ctrFormat, "--short")},
		}
}

// containerRule accepts docker/podman listing and inspection commands.
func containerRule(args []arg) bool {
	if !allKnown(args) {
		return false
	}
	if len(args) == 1 && (args[0].v == "--version" || args[0].v == "-v") {
		return true
	}
	s := scanner{args: args}
	sub, ok := s.sub(containerGlobal)
	if !ok {
		return false
	}
	if o, found := containerSubs[sub]; found {
		_, ok := operands(o, args[s.i:])
		return ok
	}
	group, found := containerGroups[sub]
	if !found {
		return false
	}
	groupOpts := noOpts
	if sub == "compose" {
		groupOpts = ctrCompose
	}
	sub2, ok := s.sub(groupOpts)
	if !ok {
		return false
	}
	o, found := group[sub2]
	if !found {
		return false
	}
	_, ok = operands(o, args[s.i:])
	return ok
}

// Cluster CLIs (kubectl, oc). Flags may come anywhere, so every word is
// scanned with the global options plus the verb's own; the first operand
// is the verb. --kubeconfig is not allowed: a kubeconfig can name an exec
// credential plugin, which kubectl runs.
const kubeGlobal = "-n: -s: -v: --namespace= --context= --cluster= --user= --server= --request-timeout= " +
	"--as= --as-group= --as-uid= --insecure-skip-tls-verify --tls-server-name= --match-server-version " +
	"--v= --warnings-as-errors --disable-compression"

const kubeOut = " -o: -l: -A --output= --selector= --all-namespaces --no-headers --show-labels --sort-by= " +
	"--field-selector= -L: --label-columns= --show-kind --show-managed-fields --template= --allow-missing-template-keys"

type kubeVerb struct {
	opts *optSet
	subs map[string]*optSet // second-level read forms (config view, auth can-i)
}

// kubeVerbs is built by loadTables.
var kubeVerbs map[string]kubeVerb

func kubeTable() map[string]kubeVerb {
	return map[string]kubeVerb{
		"get":           {opts: opts(kubeGlobal, kubeOut, "-w -R -f: --watch --watch-only --output-watch-events --chunk-size= --ignore-not-found --raw= --subresource= --recursive --filename=")},
		"describe":      {opts: opts(kubeGlobal, "-l: -A -R -f: --selector= --all-namespaces --show-events=? --chunk-size= --filename= --recursive")},
		"logs":          {opts: opts(kubeGlobal, "-fp -c: -l: --follow --previous --container= --tail= --since= --since-time= --timestamps --all-containers --prefix --selector= --max-log-requests= --limit-bytes= --ignore-errors --pod-running-timeout= --all-pods")},
		"top":           {opts: opts(kubeGlobal, "-l: -A --selector= --all-namespaces --containers --sort-by= --no-headers --use-protocol-buffers --sum --show-capacity")},
		"version":       {opts: opts(kubeGlobal, "-o: --client --output= --short")},
		"explain":       {opts: opts(kubeGlobal, "--recursive --api-version= --output=")},
		"api-resources": {opts: opts(kubeGlobal, "-o: --output= --namespaced=? --verbs= --api-group= --no-headers --sort-by= --cached --categories=")},
		"api-versions":  {opts: opts(kubeGlobal)},
		"cluster-info":  {opts: opts(kubeGlobal)},
		"events":        {opts: opts(kubeGlobal, "-o: -A -w --output= --all-namespaces --for= --types= --watch --no-headers --chunk-size=")},
		"config": {opts: opts(kubeGlobal), subs: map[string]*optSet{
			"view": opts(kubeGlobal, "-o: --minify --flatten --raw --output= --merge=?"), "current-context": opts(kubeGlobal),
			"get-contexts": opts(kubeGlobal, "-o: --no-headers --output="), "get-clusters": opts(kubeGlobal),
			"get-users": opts(kubeGlobal)}},
		"rollout": {opts: opts(kubeGlobal), subs: map[string]*optSet{
			"status":  opts(kubeGlobal, "-w -R -l: -f: --watch=? --revision= --timeout= --selector= --filename= --recursive"),
			"history": opts(kubeGlobal, "-o: -R -l: -f: --revision= --output= --selector= --filename= --recursive --show-managed-fields --template=")}},
		"auth": {opts: opts(kubeGlobal), subs: map[string]*optSet{
			"can-i":  opts(kubeGlobal, "-A -q --all-namespaces --list --no-headers --quiet --subresource="),
			"whoami": opts(kubeGlobal, "-o: --output=")}},
	}
}

var kubeGlobalOpts = &optSet{specs: []string{kubeGlobal}}

// kubectlRule accepts kubectl's read verbs (and config/auth read forms).
// cluster-info takes no operand (cluster-info dump writes files).
func kubectlRule(args []arg) bool {
	if !allKnown(args) {
		return false
	}
	// The verb is the first operand; options before it are global ones.
	s := scanner{args: args}
	v, ok := s.sub(kubeGlobalOpts)
	if !ok {
		return false
	}
	kv, found := kubeVerbs[v]
	if !found {
		return false
	}
	rest := append(append([]arg{}, args[:s.i-1]...), args[s.i:]...)
	if kv.subs == nil {
		ops, ok := operands(kv.opts, rest)
		return ok && (v != "cluster-info" && v != "api-versions" || len(ops) == 0)
	}
	s = scanner{args: args[s.i:]}
	sub, ok := s.sub(kv.opts)
	if !ok {
		return false
	}
	o, found := kv.subs[sub]
	if !found {
		return false
	}
	ops, ok := operands(o, s.args[s.i:])
	return ok && (sub == "can-i" || v == "rollout" ||
		len(ops) <= 1 && (sub == "view" || sub == "get-contexts") || len(ops) == 0)
}

// findRule accepts find with starting points, options and tests from an
// exact list, and only the actions that print (-print, -print0, -printf,
// -ls, -prune, -quit): no -delete, -exec*, -ok*, -fprint*, -fls.
func findRule(args []arg) bool {
	if !allKnown(args) {
		return false
	}
	i := 0
	for i < len(args) && (args[i].v == "-H" || args[i].v == "-L" || args[i].v == "-P") {
		i++
	}
	// Starting points: words up to the first that starts an expression.
	for i < len(args) && !strings.HasPrefix(args[i].v, "-") && args[i].v != "(" && args[i].v != "!" {
		i++
	}
	for ; i < len(args); i++ {
		a := args[i].v
		if n, ok := findPrimaries[a]; ok {
			if i+n >= len(args) && n > 0 {
				return false
			}
			i += n
			continue
		}
		return false
	}
	return true
}

// findPrimaries maps each allowed expression word to the number of values
// it takes.
var findPrimaries map[string]int

func findTable() map[string]int {
	return map[string]int{
		"(": 0, ")": 0, "!": 0, ",": 0, "-not": 0, "-and": 0, "-a": 0, "-or": 0, "-o": 0,
		"-print": 0, "-print0": 0, "-printf": 1, "-ls": 0, "-prune": 0, "-quit": 0,
		"-maxdepth": 1, "-mindepth": 1, "-depth": 0, "-d": 0, "-xdev": 0, "-mount": 0, "-follow": 0,
		"-daystart": 0, "-noleaf": 0, "-ignore_readdir_race": 0, "-noignore_readdir_race": 0, "-regextype": 1,
		"-warn": 0, "-nowarn": 0, "-true": 0, "-false": 0,
		"-name": 1, "-iname": 1, "-path": 1, "-ipath": 1, "-wholename": 1, "-iwholename": 1, "-regex": 1,
		"-iregex": 1, "-lname": 1, "-ilname": 1, "-type": 1, "-xtype": 1, "-size": 1, "-empty": 0,
		"-newer": 1, "-anewer": 1, "-cnewer": 1, "-newermt": 1, "-newerct": 1, "-newerat": 1, "-newermm": 1,
		"-newerBt": 1, "-mtime": 1, "-mmin": 1, "-atime": 1, "-amin": 1, "-ctime": 1, "-cmin": 1, "-used": 1,
		"-user": 1, "-group": 1, "-uid": 1, "-gid": 1, "-nouser": 0, "-nogroup": 0, "-perm": 1, "-links": 1,
		"-inum": 1, "-samefile": 1, "-readable": 0, "-writable": 0, "-executable": 0, "-fstype": 1,
		"-context": 1,
	}
}
