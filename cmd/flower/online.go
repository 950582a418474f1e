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

// offlineLine is the status line of an "offline"/"online" event: what is
// unreachable and when the next probe comes; "" for other events.
func offlineLine(e harness.Event) string {
	host, _ := e.Data["host"].(string)
	switch {
	case e.Kind == "online":
		return fmt.Sprintf("online again: %s", host)
	case e.Kind != "offline":
		return ""
	case e.Data["gave_up"] == true:
		return fmt.Sprintf("offline: gave up on %s: %v", host, e.Data["error"])
	}
	next := "soon"
	if s, _ := e.Data["next_probe"].(string); s != "" {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			next = t.Local().Format("15:04:05")
		}
	}
	return fmt.Sprintf("offline: %s unreachable (%v) · next probe %s", host, e.Data["error"], next)
}

// offlineStatus writes offline/online events of a step to w (stderr) as one
// status line, redrawn in place on a terminal.
func offlineStatus(w io.Writer, tty bool) func(harness.Event) {
	return func(e harness.Event) {
		line := offlineLine(e)
		switch {
		case line == "":
		case tty && e.Kind == "offline" && e.Data["gave_up"] != true:
			fmt.Fprintf(w, "\r\033[K%s", line)
		case tty:
			fmt.Fprintf(w, "\r\033[K%s\n", line)
		default:
			fmt.Fprintln(w, line)
		}
	}
}
