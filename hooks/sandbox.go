package hooks

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// guardSandbox is flower-hook's sandbox subcommand: `flower-hook sandbox
// [--scratch] --cmd64 B64` runs the base64-encoded Bash command in a
// read-only sandbox (bubblewrap on Linux, sandbox-exec on macOS). It is what
// a read-only role's accepted Bash call is rewritten to (sandboxInput).
const guardSandbox = "sandbox"

// bwrapInstallHint says how to install bubblewrap, for one-line refusals and
// warnings.
const bwrapInstallHint = "apt-get install -y bubblewrap (Debian/Ubuntu; dnf install bubblewrap on Fedora)"

// maxCmd64 bounds the encoded command in the rewritten argv: Linux caps one
// argument at 128 KiB (MAX_ARG_STRLEN).
const maxCmd64 = 120 << 10

// sandboxInput is the rewritten Bash input of a sandboxed call: every field
// of the original input is kept (timeout, description, run_in_background),
// and command becomes line(the original command): Sandboxing.Line.
func sandboxInput(input json.RawMessage, line func(cmd string) (string, error)) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(input, &fields) != nil || fields == nil {
		return nil, errors.New("tool_input is not an object")
	}
	var cmd string
	if err := json.Unmarshal(fields["command"], &cmd); err != nil {
		return nil, errors.New("tool_input has no command string")
	}
	l, err := line(cmd)
	if err != nil {
		return nil, err
	}
	js, err := json.Marshal(l)
	if err != nil {
		return nil, err
	}
	fields["command"] = js
	return json.Marshal(fields)
}

// Line is the command a sandboxed call of cmd is rewritten to. On Linux
// (Bwrap set) it runs bwrap directly from claude's shell: the command
// travels hex-escaped (\xHH for every byte) in a single-quoted word that
// bash's printf builtin decodes into a variable, and reaches bash -c as
// that variable's value, one argv word, never re-parsed; no process but
// bwrap and bash is added: claude's shell execs bwrap (so its own
// "pwd -P" after the command does not run: a cd inside a glance never moved
// the session anyway) (bwrapArgs, the environment of sandboxEnv as
// --setenv, the folder under /tmp that holds $PWD bound back read-only).
// Elsewhere it is HookBin's sandbox subcommand with the command
// base64-encoded in one argv word (base64's alphabet needs no quoting).
func (sb Sandboxing) Line(cmd string, scratch bool) (string, error) {
	if sb.Bwrap == "" {
		enc := base64.RawURLEncoding.EncodeToString([]byte(cmd))
		if len(enc) > maxCmd64 {
			return "", fmt.Errorf("the command is longer than the sandbox takes (%d bytes encoded, at most %d)", len(enc), maxCmd64)
		}
		words := []string{ShellQuote(sb.HookBin), guardSandbox}
		if scratch {
			words = append(words, "--scratch")
		}
		return strings.Join(append(words, "--cmd64", enc), " "), nil
	}
	if 4*len(cmd) > maxCmd64 {
		return "", fmt.Errorf("the command is longer than the sandbox takes (%d bytes, at most %d)", len(cmd), maxCmd64/4)
	}
	var b strings.Builder
	b.WriteString("printf -v __flower_cmd %b '" + hexEscaped([]byte(cmd)))
	b.WriteString("' && __flower_top= && case $PWD in /tmp/?*) __flower_top=${PWD#/tmp/}; __flower_top=/tmp/${__flower_top%%/*};; esac && exec ")
	b.WriteString(ShellQuote(sb.Bwrap))
	set, unset := sandboxSet(sb.Env, scratch, sb.Rust)
	o := sandboxOptions{Bash: sb.Bash}
	filter, ok := TIOCSTIFilter(runtime.GOARCH)
	if ok {
		o.SeccompFD = 9
	}
	args := bwrapArgs("", o)
	for _, a := range args[:len(args)-1] {
		b.WriteString(" " + ShellQuote(a))
		if a == "/tmp" && strings.HasSuffix(b.String(), "--tmpfs /tmp") {
			b.WriteString(` ${__flower_top:+--ro-bind "$__flower_top" "$__flower_top"}`)
		}
		if a == "ALL" {
			for _, k := range sortedKeys(set) {
				b.WriteString(" --setenv " + ShellQuote(k) + " " + ShellQuote(set[k]))
			}
			for _, k := range unset {
				b.WriteString(" --unsetenv " + k)
			}
		}
	}
	b.WriteString(` "$__flower_cmd"`)
	switch {
	case ok && sb.Filter != "":
		b.WriteString(" 9<" + ShellQuote(sb.Filter))
	case ok:
		b.WriteString(" 9< <(printf %b '" + hexEscaped(filter) + "')")
	}
	return b.String(), nil
}

// sandboxed turns a decision to let a Bash glance run into one that runs
// it in the sandbox: Allow (claude's own permission layer would refuse the
// rewritten command) with the rewritten input. A call that cannot be
// rewritten is denied: the sandbox was asked for.
func sandboxed(in Input, sb Sandboxing, scratch bool, detail map[string]any) Decision {
	var err error
	if sb.locate != nil {
		err = sb.locate(&sb)
	}
	var updated json.RawMessage
	if err == nil {
		updated, err = sandboxInput(in.ToolInput, func(cmd string) (string, error) { return sb.Line(cmd, scratch) })
	}
	if err != nil {
		return Decision{Verdict: Deny, Reason: unsandboxedReason(err),
			Detail: map[string]any{"error": err.Error()}}
	}
	if detail == nil {
		detail = map[string]any{}
	}
	detail["sandbox"] = true
	if scratch {
		detail["scratch"] = true
	}
	return Decision{Verdict: Allow, UpdatedInput: updated, Detail: detail}
}

// sandboxOptions say how one sandboxed command runs.
type sandboxOptions struct {
	// Scratch points build and tool caches into the private /tmp (a judge
	// that may run the project's tests).
	Scratch bool
	// Bwrap and Bash are the programs' absolute paths (Linux).
	Bwrap, Bash string
	// Dir is the working directory the command starts in.
	Dir string
	// SeccompFD, when set, is the descriptor bwrap reads TIOCSTIFilter
	// from; it then stands in for a new session.
	SeccompFD int
}

// devNodes are the device nodes a sandboxed command may open: the sink,
// zeros and randomness. Each is a bind mount that bwrap prices at about a
// quarter of a millisecond (it rereads the mount table for each), so the
// rest of --dev's set stays out: full (a test device), random (urandom's
// twin on today's kernels) and tty (a glance prompts no one, and the
// caller's terminal stays out of reach by path).
var devNodes = []string{"null", "zero", "urandom"}

// bwrapArgs is the argv (after bwrap itself) that runs cmd in the read-only
// sandbox: the whole filesystem read-only (submounts too), a private tmpfs
// at /tmp (with the folder holding Dir bound back read-only when Dir lies
// in /tmp, tmpTop), a minimal /dev: the host's, read-only and nodev (bwrap
// binds without device access: no node opens, so root cannot write a raw
// disk, which a read-only mount alone would allow) with devNodes bound
// back (cheaper than --dev's tmpfs, devpts and six copies),
// a /proc of a new PID
// namespace, no terminal ioctl reaching the caller's terminal (the seccomp
// filter of SeccompFD, else a new session), the sandbox dying with its
// parent, every capability dropped (bwrap as root keeps them otherwise,
// and CAP_SYS_ADMIN could remount / writable) and no new privileges (bwrap
// sets PR_SET_NO_NEW_PRIVS). No IPC namespace: SysV IPC writes no file,
// and tearing one down waits for an RCU grace period on every glance. The
// network is shared: a look at a local health endpoint is a glance, and
// what may be fetched is the classifier's decision; the sandbox's promise
// is that nothing is written. cmd is one argv element of bash -c: never
// quoted, never re-parsed.
func bwrapArgs(cmd string, o sandboxOptions) []string {
	a := []string{"--ro-bind", "/", "/"}
	for _, n := range devNodes {
		a = append(a, "--dev-bind-try", "/dev/"+n, "/dev/"+n)
	}
	a = append(a, "--proc", "/proc", "--tmpfs", "/tmp")
	if top := tmpTop(o.Dir); top != "" {
		a = append(a, "--ro-bind", top, top)
	}
	a = append(a, "--unshare-pid")
	if o.SeccompFD > 0 {
		a = append(a, "--seccomp", strconv.Itoa(o.SeccompFD))
	} else {
		a = append(a, "--new-session")
	}
	a = append(a, "--die-with-parent", "--cap-drop", "ALL")
	if o.Dir != "" {
		a = append(a, "--chdir", o.Dir)
	}
	return append(a, "--", o.Bash, "-c", cmd)
}

// tmpTop is the folder right under /tmp that holds dir, when dir lies in
// /tmp: the private /tmp would hide the workspace, so that folder is bound
// back, read-only (the repository's root above a subfolder included).
func tmpTop(dir string) string {
	rest, ok := strings.CutPrefix(filepath.Clean(dir), "/tmp/")
	if !ok || rest == "" {
		return ""
	}
	first, _, _ := strings.Cut(rest, "/")
	return "/tmp/" + first
}

// gitNeutral are the git configuration keys that name a program, set for
// every sandboxed command through GIT_CONFIG_COUNT (the command line scope,
// which wins over the repository's own config): a glance never runs a
// program the workspace names.
var gitNeutral = [][2]string{
	{"core.fsmonitor", "false"}, {"core.pager", "cat"}, {"core.sshCommand", "ssh"},
	{"core.hooksPath", "/dev/null"}, {"core.askPass", ""}, {"credential.helper", ""},
	{"gpg.program", "gpg"}, {"gpg.openpgp.program", "gpg"}, {"gpg.x509.program", "gpgsm"},
	{"gpg.ssh.program", "ssh-keygen"}, {"protocol.ext.allow", "never"}, {"uploadpack.packObjectsHook", ""},
}

// sandboxEnv returns env with what a sandboxed command gets on top
// (sandboxSet).
func sandboxEnv(env []string, scratch bool, rustDefault string) []string {
	set, unset := sandboxSet(env, scratch, rustDefault)
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok && !slices.Contains(unset, k) {
			out = append(out, kv)
		}
	}
	for _, k := range sortedKeys(set) {
		out = append(out, k+"="+set[k])
	}
	return out
}

// sandboxSet is what a sandboxed command's environment gets: the git keys
// that run programs neutralised (GIT_CONFIG_COUNT, appended after any the
// caller set), no terminal prompt or askpass, GIT_EXTERNAL_DIFF unset (an
// empty one is run), GOTOOLCHAIN=local (a go.mod toolchain line downloads
// and runs another go), RUSTUP_TOOLCHAIN pinned to rustup's own default (a
// rust-toolchain.toml with a path runs the repository's binaries),
// TMPDIR=/tmp (the private one); with scratch, the caches of go, pip, npm,
// cargo and XDG in the private /tmp.
func sandboxSet(env []string, scratch bool, rustDefault string) (set map[string]string, unset []string) {
	get := func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok {
				return v
			}
		}
		return ""
	}
	n, _ := strconv.Atoi(get("GIT_CONFIG_COUNT"))
	set = map[string]string{}
	for _, kv := range gitNeutral {
		set["GIT_CONFIG_KEY_"+strconv.Itoa(n)] = kv[0]
		set["GIT_CONFIG_VALUE_"+strconv.Itoa(n)] = kv[1]
		n++
	}
	set["GIT_CONFIG_COUNT"] = strconv.Itoa(n)
	set["GIT_TERMINAL_PROMPT"] = "0"
	set["GIT_ASKPASS"] = "/bin/false"
	set["SSH_ASKPASS"] = "/bin/false"
	set["GOTOOLCHAIN"] = "local"
	set["TMPDIR"] = "/tmp"
	if rustDefault != "" {
		set["RUSTUP_TOOLCHAIN"] = rustDefault
	}
	if scratch {
		for k, v := range map[string]string{"GOCACHE": "/tmp/.cache/go-build", "XDG_CACHE_HOME": "/tmp/.cache",
			"PIP_CACHE_DIR": "/tmp/.cache/pip", "npm_config_cache": "/tmp/.npm", "CARGO_TARGET_DIR": "/tmp/cargo-target",
			"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": "/tmp/.cache/pycache", "GOFLAGS": "-mod=readonly"} {
			set[k] = v
		}
	}
	return set, []string{"GIT_EXTERNAL_DIFF"}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// rustupDefault is rustup's default toolchain from its settings file
// (RUSTUP_HOME, else ~/.rustup), or "" when there is none.
func rustupDefault(getenv func(string) string) string {
	home := getenv("RUSTUP_HOME")
	if home == "" {
		h := getenv("HOME")
		if h == "" {
			return ""
		}
		home = filepath.Join(h, ".rustup")
	}
	data, err := os.ReadFile(filepath.Join(home, "settings.toml"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if ok && strings.TrimSpace(k) == "default_toolchain" {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return ""
}

// runSandbox implements `flower-hook sandbox [--scratch] --cmd64 B64`: it
// decodes the command and replaces itself with the sandbox running it
// (execSandbox, per platform). usage errors exit 2 with one line.
func runSandbox(args []string, stderr io.Writer, getenv func(string) string) int {
	var o sandboxOptions
	var enc string
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "--scratch":
			o.Scratch = true
		case args[i] == "--cmd64" && i+1 < len(args):
			enc = args[i+1]
			i++
		default:
			fmt.Fprintf(stderr, "flower-hook sandbox: unexpected argument %q (usage: flower-hook sandbox [--scratch] --cmd64 B64)\n", args[i])
			return ExitDeny
		}
	}
	cmd, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || enc == "" {
		fmt.Fprintln(stderr, "flower-hook sandbox: --cmd64 needs the command in unpadded URL-safe base64")
		return ExitDeny
	}
	if err := execSandbox(string(cmd), o, getenv); err != nil {
		fmt.Fprintf(stderr, "flower-hook sandbox: %v\n", err)
		return 126
	}
	return 0
}

// unsandboxedText is the fixed part of unsandboxedReason.
const unsandboxedText = "flower-hook 没法把这条命令放进只读沙箱,改为派一个 subagent 去做。原因: "

// unsandboxedReason is the deny text for a glance that could not be put
// into the read-only sandbox.
func unsandboxedReason(err error) string { return unsandboxedText + err.Error() }
