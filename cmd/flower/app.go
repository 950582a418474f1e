package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/flowerhq/flower/internal/redact"
)

// Exit codes, every one flower itself chooses (README's table lists the
// same): 0 done, 1 failed, 2 usage, 3 aborted (the goal is unreachable),
// 130 interrupted (resumable), 141 stdout closed (128 + SIGPIPE, what a
// shell shows for a process a closed pipe ended). `flower claude` exits
// with claude's own code.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitAborted     = 3
	exitInterrupted = 130
	exitPipe        = 141
)

// cmdEnv is everything a command touches outside its options: the streams,
// the environment, how to tell a terminal and the factory of what talks to
// claude, the store and the guards. Main fills it from the
// process; tests fill it by hand, so every command runs in process. (Flags'
// own FLOWER_* variables are read by urfave/cli from the process
// environment; Getenv serves everything else: credentials, LANG, plugin
// and claude locations.)
type cmdEnv struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	IsTTY          func(any) bool // reports whether a stream is a terminal
	Args           []string       // the command line as typed, for "resume with" hints
	factory                       // the runtime, the session store and the guard self-test

	// parsed, when set (by tests), receives each command's parsed options
	// instead of the command running: parsing is tested apart from behaviour.
	parsed func(opts any) error
}

// do runs a command's run function on its parsed options, or hands the
// options to e.parsed.
func (e *cmdEnv) do(opts any, run func() error) error {
	if e.parsed != nil {
		return e.parsed(opts)
	}
	return run()
}

// osEnv is the process's cmdEnv. Its stdout and stderr replace
// credentials (redact.Process: the credential variables, any *TOKEN, *KEY,
// *SECRET, *PASSWORD or *CREDENTIALS value, token shapes), --json lines
// included.
// Stderr is for people only: with TERM=dumb its glyphs are ASCII.
func osEnv(args []string, stdin io.Reader, stdout, stderr io.Writer) *cmdEnv {
	red := redact.Process()
	e := &cmdEnv{Stdin: stdin, Stdout: &redact.Writer{W: stdout, R: red}, Stderr: &redact.Writer{W: stderr, R: red},
		Getenv: os.Getenv, IsTTY: isTTY, Args: args}
	e.Stderr = e.human(e.Stderr)
	e.factory = realFactory(e.Stderr)
	return e
}

// human is w for text meant for people: with TERM=dumb flower's glyphs
// (✓ ✗ … → and the rest of asciiGlyphs) are written as ASCII. Never for
// data: JSON, transcripts, exports, the MCP channel, claude's own output.
func (e *cmdEnv) human(w io.Writer) io.Writer {
	if _, done := w.(asciiWriter); done || e.Getenv("TERM") != "dumb" {
		return w
	}
	return asciiWriter{w}
}

// asciiWriter writes asciiGlyphs' ASCII in place of flower's glyphs.
type asciiWriter struct{ w io.Writer }

func (a asciiWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(a.w, asciiGlyphs.Replace(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// isTTY reports whether v (or the stream an asciiWriter or a redact.Writer
// writes to) is a terminal.
func isTTY(v any) bool {
	if a, ok := v.(asciiWriter); ok {
		v = a.w
	}
	if w, ok := v.(io.Writer); ok {
		v = redact.Underlying(w)
	}
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// usageError marks a bad invocation: exit 2 with the command's usage line.
type usageError struct {
	msg   string
	usage string // "flower step [flags] PROMPT|-"; filled in by the command layer
}

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{msg: fmt.Sprintf(format, a...)} }

// exitCoder lets library errors choose their exit code (e.g. aborted → 3).
type exitCoder interface{ ExitCode() int }

// silentExit ends flower with code and prints nothing: what there was to
// say was said already (by the child, or by the run's own summary).
type silentExit int

func (e silentExit) Error() string { return "" }
func (e silentExit) ExitCode() int { return int(e) }

// NewApp builds the flower command line on e. Every call builds fresh
// commands, flags and options: nothing is shared between two apps.
func NewApp(e *cmdEnv) *cli.App {
	root := newStarterCmd(e, false)
	app := &cli.App{
		Name:      "flower",
		Usage:     "run multi-step agent workflows on the real Claude Code CLI",
		Reader:    e.Stdin,
		Writer:    e.Stdout,
		ErrWriter: e.Stderr,
		Commands: []*cli.Command{
			newStepCmd(e), newRunsCmd(e), newSessionsCmd(e), newAskCmd(e), newWakeStateCmd(e),
			newTellCmd(e), newStarterCmd(e, true), newDoctorCmd(e), newDemoCmd(e), newModelCmd(e), newClaudeCmd(e), newMCPChannelCmd(e),
			newVersionCmd(e), newCompletionCmd(e), newCompleteCmd(e), newManCmd(e), newQueueCmd(e), newWorkerCmd(e), newUICmd(e),
		},
		Flags:     root.Flags,
		Action:    root.Action,
		UsageText: root.UsageText,
		// The root's flags belong to the flow, not to every command.
		CustomAppHelpTemplate: strings.ReplaceAll(cli.AppHelpTemplate, "GLOBAL OPTIONS:", `FLAGS of flower "what you want" (each command has its own: flower help COMMAND):`),
		// Errors are mapped to exit codes in Main, so deferred cleanup always runs.
		ExitErrHandler: func(*cli.Context, error) {},
		HideVersion:    true, // -v/--version is the root command's own flag
	}
	app.OnUsageError = usageHandler(rootUsage, app.Flags)
	app.Action = withUsage(rootUsage, app.Action)
	wireUsage("flower", app.Commands)
	return app
}

const rootUsage = `flower [flags] "what you want"   (flower help lists the commands)`

// wireUsage gives every command a one-line usage for its usage errors: a bad
// flag or argument prints that command's usage, not the whole app's.
func wireUsage(parent string, cmds []*cli.Command) {
	for _, c := range cmds {
		path := parent + " " + c.Name
		usage := path + " [flags]"
		if c.ArgsUsage != "" {
			usage += " " + c.ArgsUsage
		}
		switch {
		case len(c.Subcommands) > 0 && c.Action != nil:
			usage += "   or: " + path + " " + subcommandList(c)
		case len(c.Subcommands) > 0:
			usage = path + " " + subcommandList(c)
		}
		c.HideHelpCommand = true // flower X help is rewritten to flower X --help
		c.OnUsageError = usageHandler(usage, c.Flags)
		if c.Action != nil {
			c.Action = withUsage(usage, c.Action)
		}
		wireUsage(path, c.Subcommands)
	}
}

func subcommandList(c *cli.Command) string {
	var names []string
	for _, s := range c.Subcommands {
		names = append(names, s.Name)
	}
	return strings.Join(names, "|") + " …"
}

// usageHandler turns urfave's flag errors into one-line usage errors, with a
// suggestion for a mistyped flag and a hint for a bare duration.
func usageHandler(usage string, flags []cli.Flag) cli.OnUsageErrorFunc {
	return func(_ *cli.Context, err error, _ bool) error {
		return &usageError{msg: explainFlagError(err.Error(), flags), usage: usage}
	}
}

// withUsage fills the usage line into a usage error an action returns.
func withUsage(usage string, act cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error {
		err := act(c)
		var ue *usageError
		if errors.As(err, &ue) && ue.usage == "" {
			ue.usage = usage
		}
		return err
	}
}

// Main runs flower on the process's streams and environment.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(ctx, osEnv(args, stdin, stdout, stderr), args)
}

// run parses args (flags anywhere), runs the command and maps its error to
// an exit code, printing the error once.
func run(ctx context.Context, e *cmdEnv, args []string) int {
	if e.Args == nil {
		e.Args = args
	}
	app := NewApp(e)
	norm, err := normalizeArgs(app, args)
	if err == nil {
		err = app.RunContext(ctx, norm)
	}
	return exitFor(e, err)
}

// exitFor prints err (once, without internal package prefixes) and returns
// its exit code.
func exitFor(e *cmdEnv, err error) int {
	if err == nil {
		return exitOK
	}
	if stdoutClosed.Load() {
		fmt.Fprintln(e.Stderr, "flower: stopped: stdout was closed (the reader of the pipe went away)")
		return exitPipe
	}
	var ue *usageError
	var ec exitCoder
	var ce cli.ExitCoder
	code := exitFailed
	switch {
	case errors.As(err, &ue) || strings.HasPrefix(err.Error(), "Required flag"):
		usage := rootUsage
		if ue != nil && ue.usage != "" {
			usage = ue.usage
		}
		fmt.Fprintf(e.Stderr, "flower: %s\nUsage: %s\n", userMessage(err), usage)
		return exitUsage
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(e.Stderr, "flower: %s\n", interruptedMessage(err, e.Args))
		return exitInterrupted
	case errors.As(err, &ec):
		code = ec.ExitCode()
	case errors.As(err, &ce):
		code = ce.ExitCode()
	}
	if msg := userMessage(err); msg != "" {
		fmt.Fprintf(e.Stderr, "flower: %s\n", msg)
	}
	return code
}

// internalPrefixes are package names library errors start with; a person
// reading flower's one line has no use for them.
var internalPrefixes = []string{"harness: ", "sessionstore: ", "flow: ", "scripted: ", "hooks: ", "mdsections: ", "fleet: "}

// userMessage is err's text without internal package prefixes, wherever in
// the chain of wrapped messages they appear.
func userMessage(err error) string {
	msg := err.Error()
	for _, p := range internalPrefixes {
		msg = strings.TrimPrefix(msg, p)
		msg = strings.ReplaceAll(msg, ": "+p, ": ")
	}
	return msg
}

// resumeHint carries the exact command that picks an interrupted run up.
type resumeHint struct {
	err error
	cmd string
}

func (r *resumeHint) Error() string { return r.err.Error() }
func (r *resumeHint) Unwrap() error { return r.err }

// interruptedMessage says how to resume: the hint a command attached, or
// the same command line again.
func interruptedMessage(err error, args []string) string {
	var rh *resumeHint
	var sc *selfTestCancel
	if errors.As(err, &sc) {
		return sc.Error() + "; nothing was started — run again: " + shellJoin(append([]string{"flower"}, args[min(1, len(args)):]...))
	}
	if errors.As(err, &rh) && rh.cmd != "" {
		return "interrupted — resume with: " + rh.cmd
	}
	return "interrupted — resume with: " + shellJoin(append([]string{"flower"}, args[min(1, len(args)):]...))
}

// shellJoin quotes words for a POSIX shell, only where needed.
func shellJoin(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		if w != "" && strings.IndexFunc(w, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,@%+", r))
		}) < 0 {
			out[i] = w
			continue
		}
		out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
