package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/flowerhq/flower/flow"
)

// interruptible handles Ctrl-C for a run. At a terminal the first Ctrl-C asks
// for the words to resume with and interrupts the running step with them
// (the human interrupt); an empty line resumes without words (the
// step goes on as it was); a second Ctrl-C, or any Ctrl-C off a terminal,
// cancels the run, which stays resumable; SIGTERM and SIGHUP cancel it at
// once. The words come from lines, the
// terminal's one reader, which the channel's questions share: a question
// answered earlier cannot take them.
func interruptible(parent context.Context, rt interface{ Interrupt(words string) int }, lines *flow.Lines, out io.Writer, tty bool) (context.Context, func()) {
	ctx, cancelCause := context.WithCancelCause(parent)
	cancel := func() { cancelCause(nil) }
	sig := make(chan os.Signal, 2)
	release := claimInterrupt()
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		asking := false
		words := make(chan string, 1)
		for {
			select {
			case <-done:
				return
			case s := <-sig:
				if !tty || asking || s != os.Interrupt {
					// The step's error names the signal (a hangup, say).
					cancelCause(fmt.Errorf("%w (%v signal received)", context.Canceled, s))
					return
				}
				asking = true
				fmt.Fprint(out, "\n[flower] interrupted. What should it do instead?\n(Enter sends; empty resumes; Ctrl-C aborts)\n> ")
				go func() {
					line, _, _ := lines.ReadLine(ctx)
					words <- strings.TrimSpace(line)
				}()
			case w := <-words:
				asking = false
				if w == "" {
					fmt.Fprint(out, "[flower] no words: the step goes on as it was.\n")
					continue
				}
				rt.Interrupt(w)
			}
		}
	}()
	return ctx, func() { signal.Stop(sig); release(); close(done); cancel() }
}
