package hooks

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// GuardLive is the SessionStart hook that proves a step's guards live: it
// reports {"kind":"guards_live","token":…} to $FLOWER_SOCKET, and flower
// sends the step's prompt only once that report arrived (a claude whose
// settings switched the hooks off never runs it, and the step fails closed).
const GuardLive = "live"

// LiveTokenEnv carries the per-attempt token the live report echoes, so a
// report from another process cannot stand in for this step's hooks.
const LiveTokenEnv = "FLOWER_LIVE_TOKEN"

// EventGuardsLive is the kind of the live report.
const EventGuardsLive = "guards_live"

// liveTimeout bounds the live report: it is not on a tool's path, and a
// loaded machine may take a while to accept.
const liveTimeout = 10 * time.Second

// liveReport is the line GuardLive sends.
type liveReport struct {
	V         int    `json:"v"`
	Kind      string `json:"kind"`
	Token     string `json:"token"`
	SessionID string `json:"session_id"`
	Source    string `json:"source,omitempty"`
}

// runLive reads the SessionStart input, reports live and waits for the
// socket's acknowledgement. It answers {} whatever happens: a report that
// does not arrive is what flower's wait sees.
func runLive(stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	data, _ := io.ReadAll(io.LimitReader(stdin, maxInput))
	var in struct {
		SessionID string `json:"session_id"`
		Source    string `json:"source"`
	}
	_ = json.Unmarshal(data, &in)
	fmt.Fprintln(stdout, "{}")
	path := getenv(SocketEnv)
	if path == "" {
		return ExitOK
	}
	line, _ := json.Marshal(liveReport{V: reportVersion, Kind: EventGuardsLive, Token: getenv(LiveTokenEnv), SessionID: in.SessionID, Source: in.Source})
	if err := sendAcked(path, line); err != nil {
		fmt.Fprintf(stderr, "flower-hook live: %v\n", err)
	}
	return ExitOK
}
