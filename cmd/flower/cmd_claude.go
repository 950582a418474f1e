package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/creack/pty"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/hooks"
	"github.com/flowerhq/flower/internal/child"
	"github.com/flowerhq/flower/internal/envlist"
	"github.com/flowerhq/flower/internal/redact"
	"github.com/flowerhq/flower/sessionstore"
)

const claudeHelp = `flower claude [claude args…]

claude as a guarded coordinator: the same arguments, the same exit code,
interactive under a pseudo-terminal when you are at one (window size
forwarded), plain pass-through in a pipeline. It is not plain claude: the
guards plugin (embedded in flower, passed as --plugin-dir from your cache
folder, or $FLOWER_PLUGIN_DIR) makes the main thread delegate-only — it may
glance (read-only Bash, Read, Grep) but sends subagents (the Agent tool) to
change anything — and adds the fence, spill and index. Off a terminal each
denial is also printed on stderr ("flower: the delegate guard denied Bash:
…"). When claude exits, the session transcripts it wrote are mirrored into
the session store ($FLOWER_RUN_DIR/sessions.db, default ~/.flower/sessions.db),
and at a terminal flower names the way back with the guards on (flower claude
--resume <id>; claude's own hint would drop them). Every argument goes to
claude; claude's own help follows.

Examples:
   flower claude                          # interactive, guarded
   flower claude -p "summarize README.md" # one-shot, same output as claude -p
   flower claude --resume 1234-…          # anything claude takes
   FLOWER_RUN_DIR=runs flower claude      # mirror into ./runs/sessions.db
   FLOWER_ALLOW_DIR=~/notes flower claude # the plugin's fence lets writes land there too

As an Agent SDK executable: point pathToClaudeCodeExecutable at a wrapper
that runs exec flower claude "$@" (docs/install.md).
`

func newClaudeCmd(e *cmdEnv) *cli.Command {
	return &cli.Command{
		Name:            "claude",
		Usage:           "run claude by hand, with flower's guards and session mirroring",
		ArgsUsage:       "[claude args…]",
		SkipFlagParsing: true,
		Description:     claudeHelp,
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			return e.do(&args, func() error { return runClaudeDropIn(c.Context, e, args) })
		},
	}
}

// dropInRunDir is where `flower claude` mirrors sessions.
func dropInRunDir(getenv func(string) string) string {
	if d := getenv("FLOWER_RUN_DIR"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".flower")
}

func runClaudeDropIn(ctx context.Context, e *cmdEnv, claudeArgs []string) error {
	if wantsHelp(claudeArgs) {
		fmt.Fprint(e.Stdout, claudeHelp+"\n")
	}
	bin, err := harness.FindClaude("", e.Getenv)
	if err != nil {
		return err
	}
	plugin, err := pluginDir(e.Getenv, "")
	if err != nil {
		return err
	}
	args := append([]string{"--plugin-dir", plugin}, claudeArgs...)
	env := envlist.Unset(os.Environ(), "CLAUDECODE")
	started := time.Now()

	// claude, not a context, decides when the drop-in ends: Ctrl-C is
	// claude's to interpret. Both variants die with flower (internal/child).
	var runErr error
	f, tty := e.Stdin.(*os.File)
	tty = tty && e.IsTTY(f)
	if tty {
		cmd := child.Terminal(context.Background(), bin, args...)
		cmd.Env = env
		runErr = runUnderPTY(cmd, f, redact.Underlying(e.Stdout)) // claude's own screen, as it draws it
	} else {
		cmd := child.Command(context.Background(), bin, args...)
		cmd.Env = env
		if echo, err := startDenialEcho(e.Stderr); err == nil {
			defer echo.Close()
			cmd.Env = envlist.Set(env, hooks.SocketEnv, echo.Path())
		}
		runErr = runPassThrough(cmd, e.Stdin, redact.Underlying(e.Stdout), redact.Underlying(e.Stderr)) // the drop-in's streams are claude's
	}
	// The mirror runs after a SIGTERM too (what the Agent SDK's abort()
	// sends, which also cancels ctx): on a context of its own, bounded.
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mirrorTimeout)
	newest := mirrorTranscripts(mctx, e, started)
	cancel()
	if tty && newest != "" {
		// claude's own exit hint says `claude --resume <id>`, which drops
		// the guards: say how to come back with them.
		id := strings.TrimSuffix(filepath.Base(newest), ".jsonl")
		fmt.Fprintf(e.Stdout, "flower: resume this session with the guards on: flower claude --resume %s\n", id)
	}

	var ee *exec.ExitError
	switch {
	case runErr == nil:
		return nil
	case errors.As(runErr, &ee):
		if code := ee.ExitCode(); code >= 0 {
			return silentExit(code)
		}
		return silentExit(128 + int(ee.Sys().(syscall.WaitStatus).Signal()))
	default:
		return fmt.Errorf("claude: %w", runErr)
	}
}

// runPassThrough runs cmd on flower's own streams, forwarding SIGINT and
// SIGTERM so claude decides what an interrupt means.
func runPassThrough(cmd *exec.Cmd, in io.Reader, out, errOut io.Writer) error {
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, out, errOut
	if err := cmd.Start(); err != nil {
		return err
	}
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sig)
	defer claimInterrupt()()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case s := <-sig:
			cmd.Process.Signal(s)
		case err := <-done:
			return err
		}
	}
}

// runUnderPTY runs cmd on a pseudo-terminal sized like ours, with our
// terminal in raw mode (restored on every exit path) and SIGWINCH forwarded.
func runUnderPTY(cmd *exec.Cmd, tty *os.File, out io.Writer) error {
	ptmx, err := pty.Start(cmd)
	if err != nil {
		return err
	}
	defer ptmx.Close()

	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	defer signal.Stop(winch)
	go func() {
		for range winch {
			pty.InheritSize(tty, ptmx)
		}
	}()
	pty.InheritSize(tty, ptmx)

	if old, err := term.MakeRaw(int(tty.Fd())); err == nil {
		defer term.Restore(int(tty.Fd()), old)
	}
	// SIGTERM/SIGHUP to flower go on to claude; the deferred Restore runs
	// once claude is gone.
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sig)
	go func() {
		for s := range sig {
			cmd.Process.Signal(s)
		}
	}()

	go io.Copy(ptmx, tty)
	copied := make(chan struct{})
	go func() { io.Copy(out, ptmx); close(copied) }()
	err = cmd.Wait()
	select { // let the last screen reach the terminal
	case <-copied:
	case <-time.After(500 * time.Millisecond):
	}
	return err
}

// mirrorTimeout bounds the session mirror after claude ended.
const mirrorTimeout = 30 * time.Second

// mirrorTranscripts imports the transcripts claude wrote during this run
// into the session store and returns the newest one's path ("" for none).
// Best effort: a failure is reported, never fatal, since the transcripts
// stay in claude's own folder either way.
func mirrorTranscripts(ctx context.Context, e *cmdEnv, since time.Time) (newest string) {
	errOut := e.Stderr
	var newestMod time.Time
	projects := filepath.Join(harness.UserConfigDir(e.Getenv), "projects")
	var files []string
	filepath.WalkDir(projects, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".jsonl" {
			return nil
		}
		if info, err := d.Info(); err == nil && !info.ModTime().Before(since) {
			files = append(files, p)
			if !info.ModTime().Before(newestMod) && !strings.Contains(p, string(filepath.Separator)+"subagents"+string(filepath.Separator)) {
				newest, newestMod = p, info.ModTime()
			}
		}
		return nil
	})
	if len(files) == 0 {
		return ""
	}
	dir := dropInRunDir(e.Getenv)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		fmt.Fprintf(errOut, "flower: session mirror: %v\n", err)
		return
	}
	st, err := sessionstore.Open(filepath.Join(dir, "sessions.db"))
	if err != nil {
		fmt.Fprintf(errOut, "flower: session mirror: %v\n", err)
		return
	}
	defer st.Close()
	for _, f := range files {
		if _, err := st.Import(ctx, f); err != nil {
			fmt.Fprintf(errOut, "flower: session mirror: %s: %v\n", f, err)
		}
	}
	return newest
}

// wantsHelp reports whether claude is asked for its help: flower shows its
// own part first.
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "-h" || a == "--help" {
			return true
		}
	}
	return false
}
