// Package glance decides whether a shell command is a glance: a command
// that only looks at the machine (git status, ls, cat, grep, ps, …), so a
// coordinator may run it itself and its result goes stale instead of
// becoming a fact of the session. IsEphemeral is that decision; it is used
// by the delegate guard (hooks, --glance) and by the session store (which
// expires old glance results on load), so the two can never drift apart.
//
// # Lifecycle
//
// Nothing is kept between calls: IsEphemeral parses the command with a
// real shell parser (mvdan.cc/sh/v3, bash dialect), walks the tree and
// answers. The package does no work at init
// (flower-hook starts once per tool call): option sets are static literals, small sets are constant word
// lists, and the verb tables are built once on first use (loadTables) and
// only read afterwards, so IsEphemeral is safe for concurrent use.
//
// # An allowlist at every level
//
// The answer is "yes" only when everything in the command is on a list;
// anything else, including anything the classifier does not understand,
// is "no". A false "yes" lets a main thread write; a false "no" only costs
// a subagent, so refusing is always the cheaper mistake.
//
//   - Shell: lists, pipelines, subshells, blocks, if, case, for-in, [[ ]],
//     time and ! are walked; command and process substitution, arithmetic,
//     functions, declarations, while/until/select/coproc, background jobs,
//     subscripts, indirect, assigning and @-transforming parameter
//     expansions and [[ -v ]] are refused. Redirections only to /dev/null,
//     /dev/stdout, /dev/stderr, between descriptors or from a workspace
//     file onto descriptor 0, and no reopening of /dev/stdout or
//     /dev/stderr inside a statement that points a descriptor at a file
//     (the fd table); a prefix assignment only of a few locale and colour
//     variables. $'…' is decoded as bash 5.2 decodes it or refused, $"…"
//     is refused, and a here-document needs a plain delimiter and a body
//     without backslash-newline (quoting.go); so must a comment.
//   - Verbs: only the verbs in the table, by bare name or from /bin,
//     /usr/bin, /usr/local/bin, /sbin, /usr/sbin. No builtin that runs
//     code, evaluates or changes the shell (eval, source, exec, trap, read,
//     declare, jobs, printf -v, mapfile, bind, complete, fc, …). Verbs whose
//     read-only use cannot be told from a state change by an option list
//     (dmesg, ip, ss, mount, ifconfig, hwclock, yq with its two dialects)
//     are left out rather than denylisted.
//   - Options: each verb lists the options it may take, matched exactly:
//     long options are never completed from a prefix (getopt_long would
//     read --outp= as --output=), clustered short options are split and
//     each letter checked, and an option that takes a value consumes it,
//     so a value is never read as an operand or a subcommand.
//   - Subcommands: git, docker/podman and kubectl/oc have subcommand
//     allowlists with the global options each accepts before the
//     subcommand, and the operand shapes of the read forms (git config
//     reads only with --get/--list/get/list and their operand counts; git
//     branch and tag take patterns only when listing).
//   - Scripts: sed scripts are parsed as GNU sed does (labels end at
//     whitespace or ";") and refused if any command writes, executes or
//     reads another file (w, W, e, r, R, s///w, s///e); awk programs are
//     tokenized (strings, regexes, comments) and refused on system,
//     getline, any pipe, any redirection of print/printf, and @.
//   - Words: every word is expanded as bash expands it before any rule
//     sees it (expand.go: brace expansion with mvdan.cc/sh's own code,
//     quote removal, tilde, the command's own for and assignment values),
//     so the rules judge the argv bash builds. A glob, a tilde or a
//     parameter from the environment is unknown: never an option, a
//     value or a subcommand, except for verbs all of whose real options
//     only read (cat, ls, grep, wc, …); for the others a glob is a file
//     operand only where its literal prefix keeps it from starting with
//     "-", and a parameter only for verbs that open nothing (ls, echo).
//     The differential test compares the argv with real bash's.
//   - State: for variables and assignments only of lowercase names no
//     program reads; no device or kernel file but /dev/null and kin.
//
// This package imports nothing of flower and uses no cgo.
package glance
