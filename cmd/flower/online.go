package main

import (
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/harness"
)

// onlineTimeoutFlag bounds the wait for the API between attempts
// (Resilience.OnlineTimeout); 0, the default, waits until it answers.
func onlineTimeoutFlag(dst *time.Duration) cli.Flag {
	return &cli.DurationFlag{Name: "online-timeout", Usage: "give up when the API stays unreachable for `D` between attempts, e.g. 10m (0: wait until it answers; bound it for unattended runs)",
		EnvVars: []string{"FLOWER_ONLINE_TIMEOUT"}, Destination: dst}
}

// idleTimeoutFlag is the idle limit of an attempt (Resilience.IdleTimeout):
// no stream byte from claude for D while no tool or subagent runs ends the
// attempt as transient, and the next one resumes the session.
func idleTimeoutFlag(dst *time.Duration) cli.Flag {
	return &cli.DurationFlag{Name: "idle-timeout", Value: harness.DefaultIdleTimeout,
		Usage:   "end an attempt that gets no stream byte from claude for `D` while no tool or subagent runs, and resume its session (0: no limit)",
		EnvVars: []string{"FLOWER_IDLE_TIMEOUT"}, Destination: dst}
}

// idleLimit is the flag's value as Resilience.IdleTimeout (0 there is the
// default; off is negative).
func idleLimit(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// offlineLine is the status line of an "offline"/"online" event: what is
// unreachable and when the next probe comes; "" for other events.
func offlineLine(e harness.Event) string {
	if on, ok := e.Online(); ok {
		return fmt.Sprintf("online again: %s", on.Host)
	}
	if off, ok := e.Offline(); ok {
		return offlineNote(off)
	}
	return ""
}

// offlineNote says what is unreachable and when the next probe comes, or
// that the wait gave up.
func offlineNote(o harness.OfflineEvent) string {
	if o.GaveUp {
		return fmt.Sprintf("offline: gave up on %s: %s", o.Host, o.Error)
	}
	next := "soon"
	if t, err := time.Parse(time.RFC3339Nano, o.NextProbe); err == nil {
		next = t.Local().Format("15:04:05")
	}
	return fmt.Sprintf("offline: %s unreachable (%s) · next probe %s", o.Host, o.Error, next)
}

// noticeLine is the line of an event the person should hear of while a
// step runs: a stall that ends the attempt, a session the store lost; ""
// for other events.
func noticeLine(e harness.Event) string {
	if st, ok := e.Stall(); ok {
		return fmt.Sprintf("stalled: no stream byte from claude for %gs with nothing running; resuming the session", st.IdleS)
	}
	if e.Kind == harness.EventStore && e.Data["fresh"] == true {
		return fmt.Sprintf("session store: session %v could not be loaded (%v); this step starts a fresh session (brief, goal and notes are kept)", e.Data["session_id"], e.Data["error"])
	}
	return ""
}

// waiting says e is a probe of a wait that goes on.
func waiting(e harness.Event) bool {
	off, ok := e.Offline()
	return ok && !off.GaveUp
}

// offlineStatus writes offline/online events of a step to w (stderr) as one
// status line, redrawn in place on a terminal.
func offlineStatus(w io.Writer, tty bool) func(harness.Event) {
	return func(e harness.Event) {
		line := offlineLine(e)
		if line == "" {
			line = noticeLine(e)
		}
		switch {
		case line == "":
		case tty && waiting(e):
			fmt.Fprintf(w, "\r\033[K%s", line)
		case tty:
			fmt.Fprintf(w, "\r\033[K%s\n", line)
		default:
			fmt.Fprintln(w, line)
		}
	}
}
