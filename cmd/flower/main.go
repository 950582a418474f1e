// Command flower runs multi-step agent workflows on the Claude Code CLI.
//
// main stays tiny: everything a test or a library user needs lives in app.go
// and the packages it calls.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	os.Exit(Main(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr))
}
