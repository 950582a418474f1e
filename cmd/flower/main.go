// Command flower runs multi-step agent workflows on the Claude Code CLI.
//
// main stays tiny: everything a test or a library user needs lives in app.go
// and the packages it calls.
package main

import (
	"os"
	"runtime/debug"
)

// Signals and a closed stdout cancel the root context (rootContext,
// signals.go): Ctrl-C means "interrupt the step" to a flow at a terminal
// (see interruptible), which claims it.
//
// flower shares the machine with claude, whose boot wants every core: the
// garbage collector runs at a fifth of the default pace (a trivial step
// then needs no collection at all; the heap stays within five times what
// is live) unless GOGC says otherwise.
func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	ctx, stop := rootContext()
	defer stop()
	os.Exit(Main(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr))
}
