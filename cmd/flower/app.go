package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// Exit codes of design.md §3.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitAborted     = 3
	exitInterrupted = 130
)

// commands is filled by each cmd_*.go file's init, so that commands can be
// written side by side without touching one shared list.
var commands []*cli.Command

func register(c *cli.Command) { commands = append(commands, c) }

// The root command's flags and action (the starter flow), set by cmd_flow.go.
var (
	rootFlags     []cli.Flag
	rootAction    cli.ActionFunc
	rootUsageText string
)

// usageError marks a bad invocation: exit 2 with the usage line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// exitCoder lets library errors choose their exit code (e.g. aborted → 3).
type exitCoder interface{ ExitCode() int }

// NewApp builds the flower command line with injected streams.
func NewApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:      "flower",
		Usage:     "run multi-step agent workflows on the real Claude Code CLI",
		Reader:    stdin,
		Writer:    stdout,
		ErrWriter: stderr,
		Commands:  commands,
		Flags:     rootFlags,
		Action:    rootAction,
		UsageText: rootUsageText,
		// Errors are mapped to exit codes in Main, so deferred cleanup always runs.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return &usageError{err.Error()}
		},
		HideHelpCommand: true,
	}
	setUsageErrors(app.Commands)
	return app
}

// setUsageErrors makes a bad flag on any command an exit-2 usage error with a
// one-line message instead of a page of help.
func setUsageErrors(cmds []*cli.Command) {
	for _, c := range cmds {
		c.OnUsageError = func(_ *cli.Context, err error, _ bool) error { return &usageError{err.Error()} }
		setUsageErrors(c.Subcommands)
	}
}

// Main runs the app and maps its error to an exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := NewApp(stdin, stdout, stderr)
	err := app.RunContext(ctx, args)
	if err == nil {
		return exitOK
	}
	var ue *usageError
	var ec exitCoder
	var ce cli.ExitCoder
	switch {
	case errors.As(err, &ue) || strings.HasPrefix(err.Error(), "Required flag"):
		fmt.Fprintf(stderr, "flower: %v\nUsage: flower [command] [flags] … (see flower --help)\n", err)
		return exitUsage
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "flower: interrupted")
		return exitInterrupted
	case errors.As(err, &ec):
		if msg := err.Error(); msg != "" {
			fmt.Fprintf(stderr, "flower: %s\n", msg)
		}
		return ec.ExitCode()
	case errors.As(err, &ce):
		if msg := err.Error(); msg != "" {
			fmt.Fprintf(stderr, "flower: %s\n", msg)
		}
		return ce.ExitCode()
	default:
		fmt.Fprintf(stderr, "flower: %v\n", err)
		return exitFailed
	}
}
