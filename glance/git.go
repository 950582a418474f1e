package glance

import (
	"path"
	"strings"
)

// gitGlobal are the options git itself may take before the subcommand.
// -c, --config-env, --exec-path=, --git-dir, --work-tree, -p/--paginate and
// --namespace are out: they can make git run any program (core.pager,
// core.fsmonitor, diff.external) or read another repository's config.
var gitGlobal = opts("-P --no-pager --no-optional-locks --literal-pathspecs --glob-pathspecs " +
	"--noglob-pathspecs --icase-pathspecs --no-replace-objects --no-lazy-fetch --no-advice")

// gitDiffOpts are the options of the diff machinery (diff, show, log, …)
// that only select and format. --output, --ext-diff and --textconv-free
// external commands are not among them.
const gitDiffOpts = "-# -pusRaBDMCzbwWtrm -U? -S: -G: -O: -l: --patch --no-patch --unified=? --raw --patch-with-raw " +
	"--stat=? --numstat --shortstat --dirstat=? --cumulative --dirstat-by-file=? --summary --patch-with-stat " +
	"--name-only --name-status --submodule=? --color=? --no-color --color-moved=? --no-color-moved " +
	"--color-moved-ws= --word-diff=? --word-diff-regex= --color-words=? --no-renames --rename-empty " +
	"--no-rename-empty --check --ws-error-highlight= --full-index --binary --abbrev=? --break-rewrites=? " +
	"--find-renames=? --find-copies=? --find-copies-harder --irreversible-delete --diff-filter= " +
	"--pickaxe-all --pickaxe-regex --skip-to= --rotate-to= --relative=? --no-relative --text " +
	"--ignore-cr-at-eol --ignore-space-at-eol --ignore-space-change --ignore-all-space --ignore-blank-lines " +
	"--ignore-matching-lines= --inter-hunk-context= --function-context --exit-code --quiet --no-ext-diff " +
	"--no-textconv --ignore-submodules=? --src-prefix= --dst-prefix= --no-prefix --default-prefix " +
	"--line-prefix= --ita-invisible-in-index --ita-visible-in-index --minimal --patience --histogram " +
	"--anchored= --diff-algorithm= --indent-heuristic --no-indent-heuristic --compact-summary " +
	"--output-indicator-new= --output-indicator-old= --output-indicator-context= --cached --staged " +
	"--merge-base --no-index --cc --combined-all-paths --dd --diff-merges= --no-diff-merges --remerge-diff " +
	"--stat-width= --stat-name-width= --stat-count= --stat-graph-width= --follow"

// gitLogOpts add revision walking and commit formatting.
const gitLogOpts = " -n: -i -E -F -P -g -c --max-count= --skip= --since= --after= --until= --before= " +
	"--since-as-filter= --author= --committer= --grep= --grep-reflog= --all-match --invert-grep " +
	"--regexp-ignore-case --basic-regexp --extended-regexp --fixed-strings --perl-regexp --merges " +
	"--no-merges --min-parents=! --max-parents=! --no-min-parents --no-max-parents --first-parent " +
	"--exclude-first-parent-only --not --all --branches=? --tags=? --remotes=? --glob= --exclude= " +
	"--exclude-hidden= --reflog --single-worktree --ignore-missing --bisect " +
	"--cherry-mark --cherry-pick --left-only --right-only --cherry --walk-reflogs --merge --boundary " +
	"--simplify-by-decoration --show-pulls --full-history --dense --sparse --simplify-merges " +
	"--ancestry-path=? --date-order --author-date-order --topo-order --reverse --no-walk=? --do-walk " +
	"--pretty=? --format=! --abbrev-commit --no-abbrev-commit --oneline --encoding=! --expand-tabs=? " +
	"--no-expand-tabs --notes=? --no-notes --show-notes=? --relative-date --date= " +
	"--parents --children --left-right --graph --show-linear-break=? --decorate=? --no-decorate " +
	"--decorate-refs= --decorate-refs-exclude= --clear-decorations --source --use-mailmap --no-use-mailmap " +
	"--mailmap --no-mailmap --full-diff --log-size --count --objects --objects-edge --no-object-names " +
	"--in-commit-order --header --timestamp --disk-usage=? --show-origin -L:"

var (
	gitDiff      = opts(gitDiffOpts)
	gitLog       = opts(gitDiffOpts + gitLogOpts)
	gitStatus    = opts("-sbvz -u? --short --branch --porcelain=? --long --verbose --untracked-files=? --ignored=? --ignore-submodules=? --column=? --no-column --ahead-behind --no-ahead-behind --renames --no-renames --find-renames=? --show-stash")
	gitRevParse  = opts("-q --abbrev-ref=? --show-toplevel --git-dir --git-common-dir --absolute-git-dir --is-inside-work-tree --is-inside-git-dir --is-bare-repository --is-shallow-repository --show-prefix --show-cdup --show-superproject-working-tree --show-object-format=? --show-ref-format --short=? --verify --quiet --symbolic --symbolic-full-name --all --branches=? --tags=? --remotes=? --glob= --exclude= --since= --after= --until= --before= --default= --revs-only --no-revs --flags --no-flags --sq --not --local-env-vars --path-format= --git-path= --shared-index-path --resolve-git-dir=")
	gitLsFiles   = opts("-cdomiksuvftz -x: -X: --cached --deleted --modified --others --ignored --stage --killed --unmerged --directory --no-empty-directory --eol --exclude= --exclude-from= --exclude-per-directory= --exclude-standard --error-unmatch --full-name --recurse-submodules --abbrev=? --format= --sparse --deduplicate --with-tree= --resolve-undo")
	gitLsTree    = opts("-rdtlz --long --name-only --name-status --object-only --full-name --full-tree --abbrev=? --format=")
	gitBlame     = opts("-bltsfnpecw -M? -C? -L: -S: --root --show-stats --porcelain --line-porcelain --incremental --encoding= --contents= --date= --progress --no-progress --reverse --first-parent --since= --show-name --show-number --show-email --ignore-rev= --ignore-revs-file= --color-lines --color-by-age --abbrev=? --score-debug")
	gitDescribe  = opts("--tags --all --always --long --abbrev=? --dirty=? --broken=? --exact-match --candidates= --match= --exclude= --first-parent --contains --debug")
	gitCatFile   = opts("-tsep --path= --batch=? --batch-check=? --batch-all-objects --unordered --buffer --follow-symlinks --allow-unknown-type --use-mailmap --no-use-mailmap -Z")
	gitForEach   = opts("--format= --sort= --count= --points-at= --merged=? --no-merged=? --contains=? --no-contains=? --shell --perl --python --tcl --ignore-case --omit-empty --exclude= --color=? --stdin --include-root-refs")
	gitNameRev   = opts("--tags --refs= --exclude= --all --annotate-stdin --name-only --no-undefined --always")
	gitMergeBase = opts("-a --all --octopus --independent --is-ancestor --fork-point")
	gitCountObj  = opts("-vH --verbose --human-readable")
	gitShowRef   = opts("-dsq --head --tags --heads --branches --verify --exists --dereference --hash=? --abbrev=? --quiet")
	gitCheckIgn  = opts("-qvnz --quiet --verbose --non-matching --no-index --stdin")
	gitCheckAttr = opts("-az --all --cached --stdin --source=")
	gitCherry    = opts("-v --abbrev=?")
	gitLsRemote  = opts("-htbq -o: --heads --tags --branches --refs --quiet --exit-code --get-url --sort= --symref --server-option=")
	gitGrep      = opts("-# -acEFGhHiIlLnPrvwz -A: -B: -C: -e: -f: -m: --cached --untracked --no-index --no-exclude-standard --exclude-standard --recurse-submodules --text --no-textconv --ignore-case --max-depth= --recursive --no-recursive --word-regexp --invert-match --full-name --extended-regexp --basic-regexp --perl-regexp --fixed-strings --line-number --column --files-with-matches --name-only --files-without-match --null --only-matching --count --color=? --no-color --break --heading --show-function --function-context --context= --after-context= --before-context= --threads= --and --or --not --all-match --quiet --max-count=")
	gitVersion   = opts("--build-options")
	gitShortlog  = opts(gitLogOpts, "-snec -w? --numbered --summary --email --committer --group= --format=")
	gitRemote    = opts("-v --verbose")
	gitRemoteSh  = opts("-n")
	gitRemoteURL = opts("--push --all")
	gitWorktree  = opts("-vz --verbose --porcelain")
	gitSubmod    = opts("-q --quiet --cached --recursive")
	gitConfigOpt = opts("-z -f: --global --system --local --worktree --file= --blob= --show-origin --show-scope --null --name-only --type= --bool --int --bool-or-int --path --expiry-date --includes --no-includes --default= --all --regexp --value= --fixed-value --url=")
	gitBranchOpt = opts("-avrlqi --list --all --remotes --verbose --quiet --show-current --sort= --format= --color=? --no-color --column=? --no-column --abbrev=? --no-abbrev --ignore-case --omit-empty")
	gitTagOpt    = opts("-li -n? --list --sort= --format= --color=? --column=? --no-column --ignore-case --omit-empty")
)

// gitSub is one allowed git subcommand: its options and operand check.
type gitSub struct {
	opts     *optSet
	operands func(ops []string) bool
	custom   func(args []arg) bool
}

var gitSubs map[string]gitSub

func addGitSubs() {
	gitSubs = map[string]gitSub{
		"status": {opts: gitStatus}, "diff": {opts: gitDiff}, "log": {opts: gitLog}, "show": {opts: gitLog},
		"whatchanged": {opts: gitLog}, "rev-list": {opts: gitLog}, "shortlog": {opts: gitShortlog},
		"diff-tree": {opts: gitLog.with("--root --stdin --no-commit-id")}, "diff-files": {opts: gitDiff.with("-q -0 -1 -2 -3")},
		"diff-index": {opts: gitDiff}, "rev-parse": {opts: gitRevParse}, "ls-files": {opts: gitLsFiles},
		"ls-tree": {opts: gitLsTree}, "blame": {opts: gitBlame}, "annotate": {opts: gitBlame},
		"describe": {opts: gitDescribe}, "cat-file": {opts: gitCatFile}, "for-each-ref": {opts: gitForEach},
		"name-rev": {opts: gitNameRev}, "merge-base": {opts: gitMergeBase},
		"count-objects": {opts: gitCountObj, operands: none0}, "show-ref": {opts: gitShowRef},
		"var": {opts: opts("-l")}, "check-ignore": {opts: gitCheckIgn}, "check-attr": {opts: gitCheckAttr},
		"cherry": {opts: gitCherry}, "ls-remote": {opts: gitLsRemote}, "version": {opts: gitVersion, operands: none0},
		"grep":   {opts: gitGrep},
		"branch": {custom: gitListRule(gitBranchOpt)}, "tag": {custom: gitListRule(gitTagOpt)},
		"stash":     {custom: gitNested(map[string]*optSet{"list": gitLog, "show": gitLog})},
		"notes":     {custom: gitNested(map[string]*optSet{"list": opts(), "show": opts(), "": opts()})},
		"worktree":  {custom: gitNested(map[string]*optSet{"list": gitWorktree})},
		"submodule": {custom: gitSubmoduleRule},
		"remote":    {custom: gitRemoteRule},
		"config":    {custom: gitConfigRule},
		"reflog":    {custom: gitNested(map[string]*optSet{"show": gitLog, "list": opts(), "": gitLog})},
		"show-branch": {opts: opts("-agr --all --remotes --topo-order --date-order --current --sparse --more=? " +
			"--list --independent --merge-base --no-name --sha1-name --topics --reflog=? --color=? --no-color")},
	}
}

func none0(ops []string) bool { return len(ops) == 0 }

// gitRule accepts `git [global options] SUBCOMMAND args` for an allowed
// subcommand whose options are all on its list.
func gitRule(args []arg) bool {
	if !allKnown(args) {
		return false
	}
	if len(args) == 1 && args[0].v == "--version" {
		return true
	}
	for _, a := range args {
		if runsGPG(a.v) {
			return false
		}
	}
	// -C only to the workspace itself: another folder's repository brings
	// its own config (core.fsmonitor, diff.external, textconv, gpg.program).
	// No ".." either: the kernel resolves x/.. through x, and a symlink x
	// leads elsewhere (path.Clean only looks at the letters).
	for len(args) >= 2 && args[0].v == "-C" && path.Clean(args[1].v) == "." && !strings.Contains(args[1].v, "..") {
		args = args[2:]
	}
	s := scanner{args: args}
	// Global options stop at the first non-option word: the subcommand.
	sub, ok := s.sub(gitGlobal)
	if !ok {
		return false
	}
	g, found := gitSubs[sub]
	if !found {
		return false
	}
	rest := args[s.i:]
	if g.custom != nil {
		return g.custom(rest)
	}
	ops, ok := operands(g.opts, rest)
	if !ok {
		return false
	}
	return g.operands == nil || g.operands(values(ops))
}

// gitNested accepts `git X SUB [options] [operands]` where SUB is a key of
// subs; the "" key allows X without a sub (git reflog -10, git notes).
func gitNested(subs map[string]*optSet) func(args []arg) bool {
	return func(args []arg) bool {
		bare, hasBare := subs[""]
		if len(args) == 0 {
			return hasBare
		}
		if o, ok := subs[args[0].v]; ok && args[0].v != "" {
			_, ok := operands(o, args[1:])
			return ok
		}
		if !hasBare || !strings.HasPrefix(args[0].v, "-") {
			return false
		}
		_, ok := operands(bare, args)
		return ok
	}
}

// gitFilters are branch/tag options that take the next word as their
// commit (git's "last argument default") and imply listing.
var gitFilters = []string{"--contains", "--no-contains", "--merged", "--no-merged", "--points-at"}

// gitListRule accepts the listing forms of git branch and git tag:
// operands (patterns) only once listing was asked for (-l, --list, a filter
// option, tag -n), since git branch X creates X and git tag X tags.
func gitListRule(o *optSet) func(args []arg) bool {
	return func(args []arg) bool {
		listing := false
		var rest []arg
		for i := 0; i < len(args); i++ {
			a := args[i].v
			if o.takesNext(a) && i+1 < len(args) {
				rest = append(rest, args[i], args[i+1])
				i++
				continue
			}
			if a == "--" {
				rest = append(rest, args[i:]...)
				break
			}
			name, _, glued := strings.Cut(a, "=")
			if contains(gitFilters, name) {
				listing = true
				if !glued && i+1 < len(args) && !strings.HasPrefix(args[i+1].v, "-") {
					i++
				}
				continue
			}
			if a == "--list" || len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsAny(a[1:2], "ln") {
				listing = true
			}
			rest = append(rest, args[i])
		}
		ops, ok := operands(o, rest)
		return ok && (len(ops) == 0 || listing)
	}
}

// gitRemoteRule: git remote [-v], git remote [-v] show [-n] NAME…, git
// remote get-url [--push] [--all] NAME. A flag before the subcommand is
// still followed by the subcommand, which must be a read form.
func gitRemoteRule(args []arg) bool {
	s := scanner{args: args}
	sub, done, ok := s.next(gitRemote)
	if !ok || s.ended {
		return false
	}
	if done {
		return true
	}
	var o *optSet
	switch sub.v {
	case "show":
		o = gitRemoteSh
	case "get-url":
		o = gitRemoteURL
	default:
		return false
	}
	ops, ok := operands(o, args[s.i:])
	return ok && len(ops) >= 1 && (sub.v == "show" || len(ops) == 1)
}

// gitSubmoduleRule: git submodule [status] with listing options only.
func gitSubmoduleRule(args []arg) bool {
	s := scanner{args: args}
	sub, done, ok := s.next(gitSubmod)
	if !ok || s.ended {
		return false
	}
	if done {
		return true
	}
	if sub.v != "status" {
		return false
	}
	_, ok = operands(gitSubmod, args[s.i:])
	return ok
}

// gitConfigModes are git config's read modes, given as options.
var gitConfigModes = []string{"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l"}

// gitConfigRule accepts only the reading forms of git config. git 2.39's
// config (builtin/config.c, parse_options without KEEP_UNKNOWN) stops at
// the first positional: every later word, "--get" included, is an operand,
// so git config NAME VALUE --get sets NAME. Options and the mode therefore
// come first; then the read form's operand count: --get/--get-all/
// --get-regexp NAME [VALUE-PATTERN], --get-urlmatch NAME URL, --list/-l
// none, and without a mode a single NAME (a read), "get NAME" or "list"
// (git 2.46's subcommands; to 2.39 "get" and "list" are names without a
// section, which git refuses to set).
func gitConfigRule(args []arg) bool {
	mode := ""
	s := scanner{args: args, strict: true}
	i := 0
	for i < len(args) {
		a := args[i]
		if !isOption(a) {
			break
		}
		if a.v == "--" {
			i++
			break
		}
		if contains(gitConfigModes, a.v) {
			if mode != "" {
				return false
			}
			mode = a.v
			i++
			continue
		}
		s.i = i + 1
		if !s.option(gitConfigOpt, a.v) {
			return false
		}
		i = s.i
	}
	ops := args[i:]
	if !allKnown(ops) {
		return false
	}
	n := len(ops)
	switch mode {
	case "--get", "--get-all", "--get-regexp":
		return n == 1 || n == 2
	case "--get-urlmatch":
		return n == 2
	case "--list", "-l":
		return n == 0
	}
	switch {
	case n == 1:
		// git config NAME reads NAME; a word without a section would be a
		// subcommand of git 2.46 (edit opens an editor): only "list".
		return strings.Contains(ops[0].v, ".") || ops[0].v == "list"
	case n == 2:
		return ops[0].v == "get"
	}
	return false
}

// runsGPG reports a git word that shows signatures: %G placeholders of a
// pretty format and %(signature) atoms run gpg (gpg.program).
func runsGPG(w string) bool {
	return strings.Contains(w, "%G") || strings.Contains(w, "%(signature")
}
