package main

import (
	"fmt"
	"io"
	"time"

	"github.com/flowerhq/flower/harness"
)

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
