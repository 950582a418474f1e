package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// errStdoutClosed is the root context's cause once stdout's reader went
// away (`flower demo | head`): a cancel, so every command unwinds (its temp
// folders go), and exitFor then says so instead of "interrupted".
var errStdoutClosed = fmt.Errorf("%w: stdout was closed", context.Canceled)

// interruptClaims counts the handlers that own SIGINT now (claimInterrupt);
// stdoutClosed is set when errStdoutClosed cancelled the root context.
var interruptClaims atomic.Int32
var stdoutClosed atomic.Bool

// claimInterrupt makes SIGINT the caller's until release: a flow at a
// terminal asks for words, `flower claude` hands it on to claude.
func claimInterrupt() (release func()) {
	interruptClaims.Add(1)
	var once sync.Once
	return func() { once.Do(func() { interruptClaims.Add(-1) }) }
}

// rootContext is the context of a flower process. SIGTERM and SIGHUP (the
// terminal closed, the ssh connection dropped) cancel it; so does SIGINT
// unless a command claimed it, and a second unclaimed SIGINT ends flower at
// once (130) for a command that does not listen. A write to a closed stdout
// cancels it with errStdoutClosed (SIGPIPE is caught, so the write fails
// instead of killing flower before its deferred clean-ups ran; a SIGPIPE of
// another pipe, a child's stdin say, changes nothing). Every cause wraps
// context.Canceled and names the signal.
func rootContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGHUP, os.Interrupt, syscall.SIGPIPE)
	go func() {
		for s := range sig {
			switch {
			case s == syscall.SIGPIPE:
				if stdoutGone() {
					stdoutClosed.Store(true)
					cancel(errStdoutClosed)
				}
			case s == os.Interrupt && interruptClaims.Load() > 0:
			case s == os.Interrupt && ctx.Err() != nil:
				os.Exit(exitInterrupted)
			default:
				cancel(fmt.Errorf("%w (%v signal received)", context.Canceled, s))
			}
		}
	}()
	return ctx, func() { signal.Stop(sig); cancel(nil) }
}

// stdoutGone reports whether stdout's reader is gone: a pipe (or socket)
// whose other end closed polls as an error or a hangup.
func stdoutGone() bool {
	fds := []unix.PollFd{{Fd: 1, Events: unix.POLLOUT}}
	for {
		_, err := unix.Poll(fds, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
	}
}
