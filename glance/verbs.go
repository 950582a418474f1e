package glance

import (
	"strings"
	"sync"
)

// Parser families, per verb, and where each was checked:
//
//	getopt_long (exact long names, --opt=v and --opt v for required
//	  values, optional values only glued; a required value takes the next
//	  word whatever it is, so one that looks like an option is judged as
//	  one too): coreutils (ls, cat, head, tail, wc, sort, uniq, cut, …;
//	  src/*.c long_options), grep (src/grep.c), diff (src/diff.c), sed
//	  (sed/sed.c), find's own expression parser (find/parser.c), file
//	  (src/file.c: -z/-Z dropped), ps/pgrep (procps), ag (src/options.c:
//	  --context optional_argument, -A/-B/-C give the word back when it
//	  is not a number), journalctl/systemctl (systemd getopt_long).
//	git parse-options + revision.c (options after positionals; -U and
//	  --unified PARSE_OPT_OPTARG in diff.c; --format=, --pretty=,
//	  --min-parents=, --max-parents=, --encoding= by skip_prefix in
//	  revision.c, so glued only; builtin/config.c on 2.39 stops at the
//	  first positional): git.go.
//	cobra/pflag (flags anywhere, -n=x, a required value takes the next
//	  word): kubectl, oc, helm, docker/podman subcommands (the docker
//	  root command is not interspersed: globals before the subcommand).
//	tree's own (tree.c main: each value letter of a cluster takes the
//	  next argv word): treeClusters.
//	clap (rg): required values only; --pre, -z, --hostname-bin left out.
//	single-dash long options (xxd, openssl, java -version): exact forms.
//
// verbs is the allowlist: every verb a glance may run, with its exact
// options. Verbs that are not here (xargs, exec, eval, source, ., tee, cd,
// sudo, env with a command, timeout, nice, jobs, read, declare, dmesg, ip,
// ss, mount, ifconfig, yq, …) are never ephemeral.
var verbs map[string]*verb

// add registers names with the same rule.
func add(v *verb, names ...string) {
	for _, n := range names {
		verbs[n] = v
	}
}

// harmless is a verb none of whose options writes, runs or changes
// anything; the options are still matched exactly.
func harmless(spec ...string) *verb { return &verb{opts: opts(spec...), harmless: true} }

// strict is a verb some of whose options would write or run something:
// every word must be known and every option listed.
func strict(spec ...string) *verb { return &verb{opts: opts(spec...)} }

const helpVersion = " --help --version"

// loadTables builds the verb and subcommand tables on first use (not at
// init: flower-hook starts once per tool call and most calls never ask).
func loadTables() { tablesOnce.Do(buildTables) }

var tablesOnce sync.Once

func buildTables() {
	verbs = make(map[string]*verb, 256)
	containerSubs, containerGroups = containerTables()
	kubeVerbs, findPrimaries, helmSubs = kubeTable(), findTable(), helmTable()
	addGitSubs()
	addSystemVerbs()
	addFileVerbs()
	addTextVerbs()
	add(&verb{custom: gitRule}, "git")
	add(&verb{custom: containerRule}, "docker", "podman")
	add(&verb{custom: kubectlRule}, "kubectl", "oc")
	add(&verb{custom: findRule}, "find")
	add(&verb{custom: sedRule}, "sed")
	add(&verb{custom: awkRule}, "awk", "gawk", "mawk", "nawk")
	addReadForms()
	// Strict verbs whose operands are plain files (or a pattern, then
	// files): a glob with a literal prefix may be one (sort src/*.txt).
	for _, n := range []string{"sort", "file", "rg", "ag", "iconv"} {
		verbs[n].files = true
	}
	// Verbs that open no file an operand or option names: an unbound
	// parameter ($HOME) may be one of their words.
	for _, n := range []string{"ls", "stat", "basename", "dirname", "readlink", "realpath", "which", "type",
		"id", "uname", "whoami", "pwd", "printenv", "nproc", "groups", "arch", "logname", "tty"} {
		verbs[n].noOpen = true
	}
}

// addSystemVerbs: directory, system, process and path information.
func addSystemVerbs() {
	add(harmless("-1aAbBcCdfFghHiklLmnNopqQrRsStuUvxXZ -I: -T: -w: --all --almost-all --author --escape --block-size= "+
		"--ignore-backups --color=? --directory --dired --classify=? --file-type --format= --full-time "+
		"--group-directories-first --no-group --human-readable --si --dereference-command-line "+
		"--dereference-command-line-symlink-to-dir --hide= --hyperlink=? --indicator-style= --inode --ignore= "+
		"--kibibytes --dereference --numeric-uid-gid --literal --hide-control-chars --show-control-chars "+
		"--quote-name --quoting-style= --reverse --recursive --size --sort= --time= --time-style= --tabsize= "+
		"--width= --context --zero"+helpVersion), "ls")
	add(harmless("-LP"), "pwd")
	add(harmless("-ahHiklPTv -B: -t: -x: --all --block-size= --human-readable --si --inodes --local --no-sync "+
		"--output=? --portability --total --type= --print-type --exclude-type="+helpVersion), "df")
	add(harmless("-0abcDhHklLmsSxP -B: -d: -t: -X: --null --all --apparent-size --block-size= --bytes --total "+
		"--dereference-args --max-depth= --human-readable --inodes --si --summarize --threshold= --time=? "+
		"--time-style= --exclude= --exclude-from= --one-file-system --separate-dirs --count-links --dereference "+
		"--no-dereference"+helpVersion), "du")
	add(harmless(helpVersion), "whoami", "groups", "arch", "logname")
	add(harmless("-aZgGnruz --user --group --groups --name --real --zero --context"+helpVersion), "id")
	add(harmless("-asnrvmpio --all --kernel-name --nodename --kernel-release --kernel-version --machine "+
		"--processor --hardware-platform --operating-system"+helpVersion), "uname")
	add(harmless("-ps --pretty --since"+helpVersion), "uptime")
	add(harmless("-0 --null"+helpVersion), "printenv")
	add(harmless("--all --ignore="+helpVersion), "nproc")
	add(harmless("-bkmghwtlv -s: -c: --bytes --kilo --mega --giga --tera --peta --kibi --mebi --gibi --tebi --pebi "+
		"--human --si --lohi --total --wide --committed --seconds= --count="+helpVersion), "free")
	add(harmless("-abcepJxyB -s: --all --bytes --caches=? --extended=? --json --parse=? --hex --physical --online "+
		"--offline --sysroot= --output-all"+helpVersion), "lscpu")
	add(harmless("-abdDfJlmnprSstzA -e: -I: -o: -x: -M --all --bytes --nodeps --discard --fs --json --list "+
		"--perms --noheadings --paths --raw --scsi --inverse --topology --exclude= --include= --output= --sort= "+
		"--output-all"+helpVersion), "lsblk")
	add(harmless("-amvck --all-locales --charmaps --verbose --category-name --keyword-name"+helpVersion), "locale")
	add(harmless("-s --silent --quiet"+helpVersion), "tty")
	add(harmless("-abdHlmpqrstuTw --all --boot --dead --heading --login --lookup --mesg --message --process "+
		"--count --runlevel --short --time --users --writable"+helpVersion), "who")
	add(harmless("-hsfiuo --no-header --short --from --ip-addr --no-current --old-style"+helpVersion), "w")
	add(harmless("-a -v:"), "getconf")
	add(harmless("-afmnSdDtwy -p: -S: -c: --active --forks --slabs --one-header --stats --disk --disk-sum "+
		"--partition= --unit= --timestamp --wide --no-first"+helpVersion), "vmstat")
	add(harmless("-aAtTuUlLnNpPrReExXioOsvcWgMZ46 -C --all --tcp --udp --raw --listening --numeric --program "+
		"--route --extend --interfaces --statistics --continuous --wide --groups --verbose --numeric-hosts "+
		"--numeric-ports --numeric-users --timers --masquerade --unix --inet --inet6"+helpVersion), "netstat")
	add(harmless("-AabcDdefiJklmnPrRsUuvx -t: -O: -o: -S: -T: -M: -N: -w: --all --ascii --bytes --canonicalize "+
		"--df --direction= --evaluate --first-only --invert --json --list --mountpoint= --noheadings --output= "+
		"--output-all --pairs --raw --kernel --fstab --mtab --poll=? --timeout= --types= --target= --source= "+
		"--real --pseudo --shadowed --tree --uniq --verbose --nofsroot --notruncate"+helpVersion), "findmnt")
	add(harmless("-aidrcsvh --all --id --description --release --codename --short"), "lsb_release")
	add(strict("-sfdiIaAy --short --fqdn --long --domain --ip-address --all-ip-addresses --all-fqdns --alias "+
		"--nis --yp"+helpVersion).only(0), "hostname")
	add(strict("-0 --null").only(0), "env")
	add(&verb{custom: dateRule}, "date")
	// Processes: listing only (top only in batch mode).
	add(harmless("-AaCdeFfHjlLMNTwxyZmrSvXcehVG -o: -O: -p: -q: -s: -t: -U: -u: -g: -C: -G: --sort= --pid= --ppid= "+
		"--user= --User= --group= --Group= --format= --cols= --columns= --width= --rows= --lines= --no-headers "+
		"--headers --forest --sid= --tty= --quick-pid= --deselect --cumulative --context --info"+helpVersion).
		withOperands(psOperands), "ps")
	add(&verb{custom: topRule}, "top")
	add(harmless("-laAfxnovciwe -d: -g: -G: -P: -s: -t: -u: -U: -F: --list-name --list-full --full --exact "+
		"--newest --oldest --count --inverse --lightweight --ignore-case --delimiter= --pgroup= --group= "+
		"--parent= --session= --terminal= --euid= --uid= --pidfile= --logpidfile --ns= --nslist= --older= "+
		"--runstates= --cgroup= --env="+helpVersion), "pgrep")
	add(harmless("-scnxqz -o: -d: --check-root --omit-pid= --separator= --quiet"+helpVersion), "pidof")
	add(&verb{custom: lsofRule}, "lsof")
	// Looking up paths.
	add(harmless("-as --all --skip-alias --skip-dot --skip-tilde --show-dot --show-tilde --read-alias --read-functions"+helpVersion), "which")
	add(harmless("-bmsulg -B: -M: -S: -f"), "whereis")
	add(harmless("-afpPt"), "type")
	add(harmless("-AbcehiLPqSw0 -d: -l: -n: -r: --all --basename --count --existing --follow --ignore-case "+
		"--limit= --nofollow --null --quiet --regex= --regexp= --statistics --wholename --database="+helpVersion), "locate")
	add(&verb{custom: commandRule}, "command")
}

// addFileVerbs: viewing files.
func addFileVerbs() {
	add(harmless("-AbeEnstTuv --show-all --number-nonblank --show-ends --number --squeeze-blank --show-tabs "+
		"--show-nonprinting"+helpVersion), "cat")
	add(harmless("-# -qvz -c: -n: --bytes= --lines= --quiet --silent --verbose --zero-terminated"+helpVersion), "head")
	add(harmless("-# -fFqvz -c: -n: -s: --bytes= --lines= --quiet --silent --verbose --zero-terminated "+
		"--follow=? --retry --pid= --sleep-interval= --max-unchanged-stats="+helpVersion), "tail")
	add(harmless("-cmlLw --bytes --chars --lines --max-line-length --words --files0-from= --total="+helpVersion), "wc")
	add(harmless("-Lft -c: --dereference --file-system --format= --printf= --terse --cached="+helpVersion), "stat")
	add(harmless("-p -b: -d: -f: -h: -i: -l: -n: -s: -v: -w: --body-numbering= --section-delimiter= "+
		"--footer-numbering= --header-numbering= --line-increment= --join-blank-lines= --number-format= "+
		"--no-renumber --number-separator= --starting-line-number= --number-width="+helpVersion), "nl")
	add(harmless("-abcdfilosvxDeFHIOLX -A: -j: -N: -S: -t: -w? --address-radix= --endian= --skip-bytes= "+
		"--read-bytes= --strings=? --format= --output-duplicates --width=? --traditional"+helpVersion), "od")
	add(harmless("-bcCdoxvL -e: -f: -n: -s: --one-byte-octal --one-byte-char --canonical --two-bytes-decimal "+
		"--two-bytes-octal --two-bytes-hex --format= --format-file= --length= --skip= --no-squeezing --color=?"+helpVersion), "hexdump")
	add(harmless("-adfow -n: -t: -e: -s: -T: --all --data --print-file-name --bytes= --radix= --encoding= "+
		"--include-all-whitespace --output-separator= --target= --unicode="+helpVersion), "strings")
	add(harmless("-femnqsvz --canonicalize --canonicalize-existing --canonicalize-missing --no-newline --quiet "+
		"--silent --verbose --zero"+helpVersion), "readlink")
	add(harmless("-emLPqsz --canonicalize-existing --canonicalize-missing --logical --physical --quiet --strip "+
		"--no-symlinks --zero --relative-to= --relative-base="+helpVersion), "realpath")
	add(harmless("-az -s: --multiple --suffix= --zero"+helpVersion), "basename")
	add(harmless("-z --zero"+helpVersion), "dirname")
	add(harmless("-bctwz --binary --check --tag --text --zero --ignore-missing --quiet --status --strict --warn"+helpVersion),
		"md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum")
	add(harmless("-bctwz -l: --binary --check --tag --text --zero --ignore-missing --quiet --status --strict "+
		"--warn --length="+helpVersion), "b2sum")
	add(harmless("-z -a: -l: --algorithm= --base64 --check --length= --raw --tag --untagged --zero"+helpVersion), "cksum")
	add(strict("-adfilpqsugDFNQrtvcnxCJXhU -L: -P: -I: -H: -T: --noreport --dirsfirst --filesfirst --gitignore "+
		"--du --prune --filelimit= --charset= --matchdirs --ignore-case --timefmt= --sort= --info --fromfile "+
		"--metafirst --inodes --device"+helpVersion).treeClusters(), "tree")
	add(strict("-bcdEhiLlNprsSk0 -F: -P: --brief --mime --mime-type --mime-encoding --dereference "+
		"--no-dereference --keep-going --raw --special-files --no-sandbox "+
		"--print0 --no-pad --preserve-date --separator= --parameter= --apple --extension"+helpVersion), "file")
	add(strict("-HIusiFgalL0 -e: -t: -E: -d: -S: -c: -j: -o: --hidden --no-ignore --no-ignore-vcs --unrestricted "+
		"--case-sensitive --ignore-case --glob --regex --fixed-strings --absolute-path --full-path --follow "+
		"--print0 --list-details --extension= --type= --exclude= --max-depth= --min-depth= --exact-depth= "+
		"--size= --changed-within= --changed-before= --owner= --color= --threads= --max-results= "+
		"--base-directory= --search-path= --prune --show-errors --one-file-system --strip-cwd-prefix=?"+helpVersion), "fd", "fdfind")
}

// addTextVerbs: searching and text processing.
func addTextVerbs() {
	grepOpts := "-# -abcEFGhHiIlLnoqrRsTuUvVwxyzZP -A: -B: -C: -e: -f: -m: -d: -D: --extended-regexp " +
		"--fixed-strings --basic-regexp --perl-regexp --regexp= --file= --ignore-case --no-ignore-case " +
		"--word-regexp --line-regexp --null-data --no-messages --invert-match --max-count= --byte-offset " +
		"--line-number --no-line-number --line-buffered --with-filename --no-filename --label= --only-matching " +
		"--quiet --silent --binary-files= --text --directories= --devices= --recursive --dereference-recursive " +
		"--include= --exclude= --exclude-from= --exclude-dir= --files-without-match --files-with-matches " +
		"--count --initial-tab --null --before-context= --after-context= --context= --color=? --colour=? --binary" + helpVersion
	add(harmless(grepOpts), "grep", "egrep", "fgrep")
	add(strict("-# -iSsFwxvcClnNoquLHhIa0bU. -g: -t: -T: -e: -f: -A: -B: -C: -m: -M: -j: -r: -E: -d: --files "+
		"--hidden --no-ignore --no-ignore-vcs --no-ignore-dot --no-ignore-parent --unrestricted --glob= --iglob= "+
		"--type= --type-not= --type-list --json --count --count-matches --files-with-matches "+
		"--files-without-match --line-number --no-line-number --max-count= --max-depth= --fixed-strings "+
		"--ignore-case --smart-case --case-sensitive --word-regexp --line-regexp --invert-match --context= "+
		"--before-context= --after-context= --no-heading --heading --with-filename --no-filename --color= "+
		"--colors= --sort= --sortr= --trim --vimgrep --only-matching --pcre2 --multiline --multiline-dotall "+
		"--replace= --stats --follow --null --max-columns= --max-columns-preview --max-filesize= --column "+
		"--no-column --passthru --quiet --no-messages --text --binary --one-file-system --include-zero "+
		"--byte-offset --crlf --encoding= --engine= --threads= --null-data --no-config --no-require-git "+
		"--glob-case-insensitive --path-separator= --field-match-separator= --field-context-separator= "+
		"--context-separator= --no-context-separator --block-buffered --line-buffered --unicode --no-unicode "+
		"--mmap --no-mmap --debug --trace"+helpVersion), "rg")
	add(strict("-iSslLcwvQuUaft -G: -g: -A: -B: -C: -m: --ignore= --hidden --depth= --literal --nocolor "+
		"--vimgrep --ignore-case --case-sensitive --smart-case --files-with-matches --files-without-matches "+
		"--count --word-regexp --invert-match --unrestricted --all-types --search-binary --follow "+
		"--max-count= --context=? --after= --before= --nogroup --group --noheading --column --stats"+helpVersion), "ag")
	add(harmless("-snz --complement -b: -c: -d: -f: --bytes= --characters= --delimiter= --fields= --only-delimited "+
		"--output-delimiter= --zero-terminated"+helpVersion), "cut")
	add(harmless("-cCdst --complement --delete --squeeze-repeats --truncate-set1"+helpVersion), "tr")
	add(harmless("-# -abBcdeEfilnNpqrsStTuwyZ -C: -D: -F: -I: -L: -S: -U: -W: -x: -X: --normal --brief "+
		"--report-identical-files --context=? --unified=? --ed --rcs --side-by-side --width= --left-column "+
		"--suppress-common-lines --show-c-function --show-function-line= --label= --expand-tabs --initial-tab "+
		"--tabsize= --suppress-blank-empty --new-file --unidirectional-new-file --ignore-case "+
		"--ignore-tab-expansion --ignore-trailing-space --ignore-space-change --ignore-all-space "+
		"--ignore-blank-lines --ignore-matching-lines= --text --strip-trailing-cr --recursive --no-dereference "+
		"--exclude= --exclude-from= --starting-file= --from-file= --to-file= --ignore-file-name-case "+
		"--no-ignore-file-name-case --minimal --speed-large-files --horizon-lines= --color=? --palette= "+
		"--ifdef= --old-line-format= --new-line-format= --unchanged-line-format= --line-format= "+
		"--old-group-format= --new-group-format= --changed-group-format= --unchanged-group-format= "+
		"--paginate"+helpVersion), "diff")
	add(harmless("-blsz -i: -n: --print-bytes --ignore-initial= --verbose --bytes= --quiet --silent --zero"+helpVersion), "cmp")
	add(harmless("-123iz --check-order --nocheck-order --output-delimiter= --total --zero-terminated"+helpVersion), "comm")
	add(harmless("-tenxJLdR -s: -o: -c: -N: -H: -T: -E: -W: -r: -l: --table --separator= --output-separator= "+
		"--output-width= --table-columns= --table-hide= --table-truncate= --table-noextreme= --table-wrap= "+
		"--table-right= --table-name= --tree= --tree-id= --tree-parent= --keep-empty-lines --json "+
		"--fillrows --table-noheadings --table-order= --table-columns-limit="+helpVersion), "column")
	add(harmless("-bs -w: --bytes --spaces --width="+helpVersion), "fold")
	add(harmless("-# -cstu -p: -g: -w: --crown-margin --prefix= --split-only --tagged-paragraph "+
		"--uniform-spacing --width= --goal="+helpVersion), "fmt")
	add(harmless("-sz -d: --delimiters= --serial --zero-terminated"+helpVersion), "paste")
	add(harmless("-iz -a: -e: -o: -t: -v: -1: -2: -j: --ignore-case --check-order --nocheck-order --header "+
		"--zero-terminated"+helpVersion), "join")
	add(harmless("-0 --zero"+helpVersion), "rev")
	add(harmless("-br -s: --before --regex --separator="+helpVersion), "tac")
	add(harmless("-# -i -t: --initial --tabs="+helpVersion), "expand")
	add(harmless("-# -a -t: --all --first-only --tabs="+helpVersion), "unexpand")
	add(harmless("-rjcnsaSCMeRh --raw-output --join-output --compact-output --null-input --slurp --exit-status "+
		"--sort-keys --ascii-output --raw-input --raw-output0 --tab --indent= --seq --stream --stream-errors "+
		"--unbuffered --color-output --monochrome-output --args --jsonargs -f: --from-file= -L: --library-path= "+
		"--arg --argjson --slurpfile --rawfile"+helpVersion).withJQ(), "jq")
	add(&verb{harmless: true, noOpen: true, custom: func([]arg) bool { return true }}, "echo", "true", "false", ":")
	add(&verb{custom: printfRule, noOpen: true}, "printf")
	add(&verb{custom: testRule}, "test", "[")
	add(harmless("-w -f: -s: --equal-width --format= --separator="+helpVersion).withNumbers(), "seq")
	add(harmless("-di -w: --decode --ignore-garbage --wrap="+helpVersion), "base64", "base32")
	add(strict("-bdfgiMhnRrVcCmsuz -k: -t: -S: --ignore-leading-blanks --dictionary-order --ignore-case "+
		"--general-numeric-sort --ignore-nonprinting --month-sort --human-numeric-sort --numeric-sort "+
		"--random-sort --random-source= --reverse --sort= --version-sort --check=? --merge --stable --unique "+
		"--zero-terminated --key= --field-separator= --buffer-size= --parallel= --debug --files0-from="+helpVersion), "sort")
	add(strict("-cdDuiz -f: -s: -w: --count --repeated --all-repeated=? --group=? --unique --ignore-case "+
		"--skip-fields= --skip-chars= --check-chars= --zero-terminated"+helpVersion).only(1), "uniq")
	add(strict("-cls -f: -t: --from-code= --to-code= --list --silent"+helpVersion), "iconv")
}

// only limits a verb to at most n operands (uniq IN OUT writes OUT;
// hostname NAME sets the host name).
func (v *verb) only(n int) *verb { v.operands = maxOperands(n); return v }

func (v *verb) withOperands(f func([]arg) bool) *verb { v.operands = f; return v }

// withNumbers lets negative numbers through as operands (seq -5 5).
func (v *verb) withNumbers() *verb {
	o := v.opts
	v.custom = func(args []arg) bool {
		s := scanner{args: args}
		for s.i < len(s.args) {
			a := s.args[s.i]
			if a.known && len(a.v) > 1 && a.v[0] == '-' && (a.v[1] == '.' || a.v[1] >= '0' && a.v[1] <= '9') {
				s.i++
				continue
			}
			if _, done, ok := s.next(o); !ok {
				return false
			} else if done {
				return true
			}
		}
		return true
	}
	return v
}

// withJQ handles jq's two-value options (--arg NAME VALUE, --argjson,
// --slurpfile, --rawfile): the generic scan knows only one value.
func (v *verb) withJQ() *verb {
	o := v.opts
	v.custom = func(args []arg) bool {
		for i := 0; i < len(args); i++ {
			switch args[i].v {
			case "--arg", "--argjson", "--slurpfile", "--rawfile":
				if !args[i].known || i+2 >= len(args) {
					return false
				}
				args = append(append([]arg{}, args[:i]...), args[i+3:]...)
				i--
			case "--args", "--jsonargs":
				// Everything after is positional data, never an option.
				_, ok := operands(o, args[:i])
				return ok
			}
		}
		_, ok := operands(o, args)
		return ok
	}
	return v
}

// psOperands: ps takes BSD option clusters without a dash (ps aux); they
// only select and format.
func psOperands(ops []arg) bool {
	for _, a := range ops {
		if !a.known {
			return false
		}
		for _, c := range a.v {
			if !strings.ContainsRune("aAcefhjlLmrsSTuvwxX", c) && !(c >= '0' && c <= '9') {
				return false
			}
		}
	}
	return true
}

// topRule: top only in batch mode (interactive top can kill and renice).
var topOpts = &optSet{specs: []string{"-bcHiSs1E -d: -n: -p: -u: -U: -o: -O: -w? -e:" + helpVersion}}

func topRule(args []arg) bool {
	if !allKnown(args) {
		return false
	}
	ops, ok := operands(topOpts, args)
	if !ok || len(ops) > 0 {
		return false
	}
	for _, a := range args {
		if strings.HasPrefix(a.v, "-") && !strings.HasPrefix(a.v, "--") && strings.ContainsRune(a.v, 'b') {
			return true
		}
	}
	return false
}

// lsofRule: lsof's -D manages a device cache file, so only listed options.
// -i takes an optional address as the next word when it does not start
// with "-"; +D/+d take a directory.
var lsofOpts = &optSet{specs: []string{"-alnPtUVwRbhKNX -p: -u: -c: -g: -s? -F? -r? -T? -d: -k: -S? -o? -O -E -Q"}}

func lsofRule(args []arg) bool {
	if !allKnown(args) {
		return false
	}
	var rest []arg
	for i := 0; i < len(args); i++ {
		a := args[i].v
		switch {
		case a == "+D" || a == "+d":
			if i+1 >= len(args) {
				return false
			}
			i++
		case strings.HasPrefix(a, "-i"):
			if a == "-i" && i+1 < len(args) && !strings.HasPrefix(args[i+1].v, "-") && !strings.HasPrefix(args[i+1].v, "+") &&
				strings.ContainsAny(args[i+1].v, ":@") {
				i++
			}
		case strings.HasPrefix(a, "+"):
			return false
		default:
			rest = append(rest, args[i])
		}
	}
	_, ok := operands(lsofOpts, rest)
	return ok
}

// commandRule: only `command -v NAME…` / `command -V NAME…` (lookups);
// `command X` runs X.
func commandRule(args []arg) bool {
	return len(args) >= 2 && allKnown(args) && (args[0].v == "-v" || args[0].v == "-V") &&
		!strings.HasPrefix(args[1].v, "-")
}

// printfRule: a known format that is not an option (printf -v assigns a
// variable); the arguments after it are data.
func printfRule(args []arg) bool {
	if len(args) == 0 || !args[0].known {
		return false
	}
	if args[0].v == "--" {
		return len(args) > 1 && args[1].known
	}
	return !strings.HasPrefix(args[0].v, "-")
}

// testRule: test and [ with known operands, no -v/-R (they evaluate array
// subscripts) and no operand that could be an array subscript.
func testRule(args []arg) bool {
	if !allKnown(args) {
		return false
	}
	for _, a := range args {
		switch {
		case a.v == "-v" || a.v == "-R":
			return false
		case a.v != "[" && a.v != "]" && strings.ContainsAny(a.v, "[]"):
			return false
		}
	}
	return true
}

// dateRule: showing the time only. Setting it (-s/--set, or an operand
// that is not a +FORMAT) is out; options are matched exactly.
var dateOpts = &optSet{specs: []string{"-uR -I? -d: -f: -r: --date= --file= --reference= --iso-8601=? --rfc-3339= --rfc-email " +
	"--rfc-2822 --utc --universal --debug --resolution", helpVersion}}

func dateRule(args []arg) bool {
	if !allKnown(args) {
		return false
	}
	ops, ok := operands(dateOpts, args)
	if !ok || len(ops) > 1 {
		return false
	}
	return len(ops) == 0 || strings.HasPrefix(ops[0].v, "+")
}
