package hooks

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/flowerhq/flower/glance"
)

// maxInput caps the hook input read from stdin. Tool outputs reach the hook
// already truncated by the CLI; more than this is garbage.
const maxInput = 64 << 20

// usage is flower-hook's help text.
const usage = `usage: flower-hook GUARD [flags] < hook-input.json

guards (each one is a hook command for settings.json or the plugin):
  delegate     PreToolUse   --tools REGEX (Bash|Write|Edit|NotebookEdit) --glance --sandbox
  whitelist    PreToolUse   --allow LIST --role NAME --glance --sandbox
  spill        PostToolUse  --dir WORKBENCH --threshold N (4000) --tools REGEX --main-only
  index        PostToolUse  --dir WORKBENCH [--max-entries N]
  isolate      PreToolUse   --roles a,b   (matcher Agent)
  fence        PreToolUse   --root DIR… --protect PATH… | --project   (matcher Write|Edit|NotebookEdit)
  is-ephemeral -- CMD       exit 0 if CMD is read-only, 1 if not
  sandbox [--scratch] --cmd64 B64   run a command in the read-only sandbox (what --sandbox rewrites Bash calls to)
  live         SessionStart reports the step's guards live to $FLOWER_SOCKET

Decisions are reported to the Unix socket in $FLOWER_SOCKET when set.
`

// guard is one configured guard, ready to decide.
type guard struct {
	name string
	// failClosed guards deny (exit 2) when they cannot decide.
	failClosed bool
	// event is the hook event the guard answers when the input has none.
	event  string
	decide func(Input) Decision
}

// Run runs one guard (args[0]) on the hook input from stdin, writes the
// hook output to stdout and returns the exit code. Deny guards (delegate,
// whitelist, fence) fail closed: bad flags, unreadable input or a panic deny with
// exit 2 and the reason on stderr. Transforming guards (spill, index,
// isolate) fail open: they answer {} and the original stands. The decision
// is then reported to $FLOWER_SOCKET (best-effort, bounded by
// reportTimeout).
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) (code int) {
	return run(args, stdin, stdout, stderr, host{getenv: getenv})
}

// run is Run for the call of h.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, h host) (code int) {
	getenv := h.getenv
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return ExitDeny
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return ExitOK
	case GuardIsEphemeral:
		return runIsEphemeral(args[1:], stdin, stdout, stderr)
	case guardSandbox:
		return runSandbox(args[1:], stderr, getenv)
	case GuardLive:
		return runLive(stdin, stdout, stderr, getenv)
	}
	g, err := newGuard(args[0], args[1:], stderr, h)
	if err != nil {
		fmt.Fprintf(stderr, "flower-hook: %v\n", err)
		if g.failClosed || g.name == "" {
			return ExitDeny
		}
		return ExitError
	}
	in := Input{}
	defer func() {
		if p := recover(); p != nil {
			code = g.fail(fmt.Errorf("panic: %v", p), in, stdout, stderr, h)
		}
	}()
	data, err := readInput(stdin, maxInput+1)
	if err == nil && len(data) > maxInput {
		err = fmt.Errorf("hook input larger than %d bytes", maxInput)
	}
	if err == nil {
		in, err = parseInput(data)
	}
	if err == nil && g.failClosed && in.ToolName == "" {
		err = errors.New("hook input names no tool")
	}
	if err != nil {
		return g.fail(err, in, stdout, stderr, h)
	}
	d := g.decide(in)
	event := in.HookEventName
	if event == "" {
		event = g.event
	}
	out, ok := marshalOutput(d.Output(event))
	if !ok {
		if out, err = json.Marshal(d.Output(event)); err != nil {
			return g.fail(err, in, stdout, stderr, h)
		}
	}
	_, _ = stdout.Write(append(out, '\n'))
	h.report(newReport(g.name, in, d))
	return ExitOK
}

// inputBuf is readInput's first buffer: a hook input of this size or less
// (a Bash call's is a few hundred bytes) is read without growing it, where
// io.ReadAll's growth from 512 bytes touches a fresh span of another size
// class (a page fault each) at every step.
const inputBuf = 8 << 10

// readInput reads r to its end, at most limit bytes.
func readInput(r io.Reader, limit int) ([]byte, error) {
	buf := make([]byte, 0, min(inputBuf, limit))
	for len(buf) < limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), limit)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// fail ends a run that could not decide: deny guards deny with exit 2 and
// the reason on stderr; transforming guards answer {} (the original stands).
func (g guard) fail(err error, in Input, stdout, stderr io.Writer, h host) int {
	d := Decision{Verdict: Pass, Detail: map[string]any{"error": err.Error()}}
	code := ExitOK
	if g.failClosed {
		d.Verdict = Deny
		d.Reason = unreadableReason(g.name, err)
		fmt.Fprintln(stderr, d.Reason)
		code = ExitDeny
	} else {
		fmt.Fprintln(stdout, "{}")
	}
	h.report(newReport(g.name, in, d))
	return code
}

// newGuard parses the flags of guard name. The returned guard carries its
// name and failClosed even when the flags are bad, so the caller knows how
// to fail.
func newGuard(name string, args []string, stderr io.Writer, h host) (guard, error) {
	getenv := h.getenv
	fs := flag.NewFlagSet("flower-hook "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	g := guard{name: name, event: "PreToolUse"}
	var parse func() error
	switch name {
	case GuardDelegate:
		g.failClosed = true
		tools := fs.String("tools", DefaultDelegateTools, "tools the main thread must delegate (regexp)")
		glance := fs.Bool("glance", false, "let ephemeral (read-only) Bash commands through")
		sb := sandboxFlags(fs, h)
		parse = func() error {
			re, err := toolMatcher(*tools)
			if err != nil {
				return err
			}
			s, err := sb()
			g.decide = func(in Input) Decision { return delegateIn(in, re, *glance, s) }
			return err
		}
	case GuardWhitelist:
		g.failClosed = true
		allow := fs.String("allow", "", "the role's allowed tools (comma separated)")
		role := fs.String("role", DefaultRole, "role name used in the deny text")
		glance := fs.Bool("glance", false, "let ephemeral (read-only) Bash commands through even when Bash is not allowed")
		sb := sandboxFlags(fs, h)
		parse = func() error {
			allowed := parseToolList(*allow)
			s, err := sb()
			g.decide = func(in Input) Decision { return whitelistIn(in, allowed, *role, *glance, s) }
			return err
		}
	case GuardFence:
		g.failClosed = true
		var cfg FenceConfig
		fs.Func("root", "a folder writes may land in (repeatable: workspace, workbench, --allow-dir)", appendTo(&cfg.Roots))
		fs.Func("protect", "a path inside the roots kept for flower (repeatable; a folder covers what is under it, * in the last element is a pattern)", appendTo(&cfg.Protected))
		project := fs.Bool("project", false, "the plugin's fence: $CLAUDE_PROJECT_DIR (else the call's cwd) and $FLOWER_ALLOW_DIR are roots, its .flower state protected")
		parse = func() error {
			if len(cfg.Roots) == 0 && !*project {
				return errors.New("fence needs --root or --project")
			}
			cfg.home = h.homeDir
			g.decide = func(in Input) Decision { return Fence(in, projectConfig(cfg, *project, in, getenv)) }
			return nil
		}
	case GuardSpill:
		g.event = "PostToolUse"
		dir := fs.String("dir", "", "workbench root (spill files go to DIR/spill/)")
		threshold := fs.Int("threshold", DefaultSpillThreshold, "spill text fields longer than N characters")
		tools := fs.String("tools", BulkyTools, "tools whose output may spill (regexp)")
		mainOnly := fs.Bool("main-only", false, "leave subagents' outputs alone")
		parse = func() error {
			if *dir == "" {
				return errors.New("spill needs --dir")
			}
			re, err := toolMatcher(*tools)
			if err != nil {
				return err
			}
			cfg := SpillConfig{Dir: *dir, Threshold: *threshold, Tools: re, MainOnly: *mainOnly}
			g.decide = func(in Input) Decision { return Spill(in, cfg) }
			return nil
		}
	case GuardIndex:
		g.event = "PostToolUse"
		dir := fs.String("dir", "", "workbench root")
		maxEntries := fs.Int("max-entries", DefaultMaxIndexEntries, "files listed per folder")
		parse = func() error {
			if *dir == "" {
				return errors.New("index needs --dir")
			}
			g.decide = func(in Input) Decision { return Index(in, *dir, *maxEntries) }
			return nil
		}
	case GuardIsolate:
		roles := fs.String("roles", "", "roles whose subagents run in a git worktree (comma separated)")
		parse = func() error {
			list := parseToolList(*roles)
			g.decide = func(in Input) Decision { return Isolate(in, list) }
			return nil
		}
	default:
		return guard{}, fmt.Errorf("unknown guard %q\n%s", name, usage)
	}
	if err := fs.Parse(args); err != nil {
		return g, fmt.Errorf("%s: %w", name, err)
	}
	if fs.NArg() > 0 {
		return g, fmt.Errorf("%s: unexpected arguments %q", name, fs.Args())
	}
	if err := parse(); err != nil {
		return g, fmt.Errorf("%s: %w", name, err)
	}
	return g, nil
}

// sandboxFlags registers --sandbox and --unclassified on fs; the returned
// function builds the Sandboxing after parsing (the hook binary is this
// one).
func sandboxFlags(fs *flag.FlagSet, h host) func() (Sandboxing, error) {
	on := fs.Bool("sandbox", false, "run the main thread's Bash calls that pass in the read-only sandbox (bubblewrap; sandbox-exec on macOS)")
	unclassified := fs.Bool("unclassified", false, "tests only, with --sandbox: take every Bash call for a glance (the sandbox alone holds)")
	return func() (Sandboxing, error) {
		if !*on {
			if *unclassified {
				return Sandboxing{host: h}, errors.New("--unclassified needs --sandbox")
			}
			return Sandboxing{host: h}, nil
		}
		// Where the programs are is looked up only for a call that is
		// sandboxed, never on the path of every other tool call.
		return Sandboxing{On: true, Unclassified: *unclassified, locate: h.locateSandbox, host: h}, nil
	}
}

// locateSandbox fills in what the sandbox runs with: flower-hook, and on
// Linux bwrap, bash (from the hook's PATH), the hook's environment and
// rustup's default. The seccomp filter's file is always under this
// process's cache folder.
func (h host) locateSandbox(sb *Sandboxing) error {
	if h.environ == nil {
		return h.locateHere(sb)
	}
	sb.HookBin = h.self
	if runtime.GOOS != "linux" {
		return nil
	}
	var ok bool
	if sb.Bwrap, ok = lookPathIn("bwrap", h.getenv("PATH")); !ok {
		return errors.New("--sandbox: bubblewrap (bwrap) was not found: install it: " + bwrapInstallHint)
	}
	if sb.Bash, ok = lookPathIn("bash", h.getenv("PATH")); !ok {
		return errors.New("--sandbox: no bash on PATH")
	}
	sb.Env, sb.Rust = h.environ, rustupDefault(h.getenv)
	seccompFile(sb)
	return nil
}

// locateHere is locateSandbox for a call this process got itself.
func (h host) locateHere(sb *Sandboxing) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("--sandbox: where is flower-hook: %w", err)
	}
	sb.HookBin = self
	if runtime.GOOS != "linux" {
		return nil
	}
	if sb.Bwrap, err = exec.LookPath("bwrap"); err != nil {
		return errors.New("--sandbox: bubblewrap (bwrap) was not found: install it: " + bwrapInstallHint)
	}
	if sb.Bash, err = exec.LookPath("bash"); err != nil {
		return errors.New("--sandbox: no bash on PATH")
	}
	sb.Env, sb.Rust = os.Environ(), rustupDefault(os.Getenv)
	seccompFile(sb)
	return nil
}

// seccompFile puts the seccomp filter's file into sb.Filter.
func seccompFile(sb *Sandboxing) {
	if prog, ok := TIOCSTIFilter(runtime.GOARCH); ok {
		// No file (no cache folder, a full disk): the line pipes the
		// filter in instead, as safe and a fork dearer.
		sb.Filter, _ = filterFile(prog, os.UserCacheDir)
	}
}

// lookPathIn finds an executable name in the absolute folders of path
// (exec.LookPath with another PATH).
func lookPathIn(name, path string) (string, bool) {
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// projectConfig adds ProjectFence to cfg when project is set: the project
// is $CLAUDE_PROJECT_DIR, else the call's cwd (neither: no root is added,
// and the fence denies).
func projectConfig(cfg FenceConfig, project bool, in Input, getenv func(string) string) FenceConfig {
	if !project {
		return cfg
	}
	dir := getenv("CLAUDE_PROJECT_DIR")
	if dir == "" {
		dir = in.Cwd
	}
	if dir == "" || !filepath.IsAbs(dir) {
		return cfg
	}
	var allow []string
	for _, d := range filepath.SplitList(getenv("FLOWER_ALLOW_DIR")) {
		if filepath.IsAbs(d) {
			allow = append(allow, d)
		}
	}
	pc := ProjectFence(dir, allow)
	return FenceConfig{Roots: append(slices.Clone(cfg.Roots), pc.Roots...), Protected: append(slices.Clone(cfg.Protected), pc.Protected...), home: cfg.home}
}

// appendTo is a repeatable string flag collecting into list; an empty value
// is an error.
func appendTo(list *[]string) func(string) error {
	return func(v string) error {
		if strings.TrimSpace(v) == "" {
			return errors.New("empty value")
		}
		*list = append(*list, v)
		return nil
	}
}

// runIsEphemeral implements `flower-hook is-ephemeral -- CMD`: exit 0 if
// CMD is ephemeral, 1 if not, 2 without a command. Several words after --
// are joined with spaces; "-" reads the command from stdin.
func runIsEphemeral(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: flower-hook is-ephemeral -- CMD")
		return ExitDeny
	}
	cmd := strings.Join(args, " ")
	if len(args) == 1 && args[0] == "-" {
		data, err := io.ReadAll(io.LimitReader(stdin, glance.MaxLen+1))
		if err != nil {
			fmt.Fprintf(stderr, "flower-hook: is-ephemeral: %v\n", err)
			return ExitDeny
		}
		cmd = string(data)
	}
	if IsEphemeral(cmd) {
		fmt.Fprintln(stdout, "ephemeral")
		return ExitOK
	}
	fmt.Fprintln(stdout, "not ephemeral")
	return ExitError
}

// unreadableText is the fixed part of unreadableReason.
const unreadableText = " 看不懂这次工具调用,为安全起见拒绝。原因: "

// unreadableReason is the deny text of a deny guard that could not read
// the tool call (it goes to the model on stderr, exit 2).
func unreadableReason(guard string, err error) string {
	return "flower-hook " + guard + unreadableText + err.Error()
}
