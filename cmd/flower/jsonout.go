package main

import (
	"encoding/json"
	"io"
	"math"
	"time"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/sessionstore"
)

// flower's --json output is one schema: every line (or array element) is an
// object with "kind"; fields are snake_case and always present ("" , 0, [],
// {} or null when empty); times are RFC 3339. jsonSchema lists each kind's
// fields (the tests hold every command's output to it, and docs/cli.md's
// "JSON output" section to it); any other kind is an event.
var jsonSchema = map[string][]string{
	"event":       {"kind", "step", "step_en", "time", "data", "raw"},
	"step_result": {"kind", "step", "step_en", "session_id", "ok", "cost_usd", "num_turns", "text", "error", "started_at", "ended_at", "seconds", "attempts", "errors", "resumed", "retired", "context", "structured_output"},
	"flow_result": {"kind", "ok", "exit_code", "error", "run", "run_dir", "events", "workbench", "brief", "goal", "verdict", "checks", "failed", "reason", "cost_usd", "seconds", "steps", "unread_messages"},
	"run":         {"kind", "run", "workspace", "started_at", "updated_at", "outcome", "altered", "verdict", "steps", "failed", "cost_usd"},
	"run_detail": {"kind", "run", "workspace", "started_at", "updated_at", "outcome", "altered", "verdict", "events", "event_count", "skipped_events", "tally",
		"denials", "spills", "cost_usd", "steps", "flow_events"},
	"told":       {"kind", "run", "step", "step_en"},
	"version":    {"kind", "version", "commit", "time", "modified", "go", "claude"},
	"doctor":     {"kind", "ok", "checks"},
	"session":    {"kind", "session_id", "project", "step", "run", "entries", "subagents", "updated_at"},
	"transcript": {"kind", "session_id", "project", "trimmed", "entries"},
	"session_report": {"kind", "session_id", "project", "transcripts", "entries", "bytes_in", "bytes_out", "expired", "expired_bytes",
		"trimmed", "trimmed_bytes", "spill_files", "pruned", "pruned_lines", "repaired"},
	"wake_state": {"kind", "wake", "workspace", "workbench", "brief_path", "goal_path", "has_brief", "missing", "brief_goal", "has_goal",
		"goal_complete", "checks", "unverifiable", "run_dir", "runs", "last_run", "sessions"},
}

// jsonTimes are the fields that hold RFC 3339 times (or "" for none).
var jsonTimes = map[string]bool{"time": true, "started_at": true, "ended_at": true, "updated_at": true}

// rfc3339 is a Unix-seconds time as RFC 3339 in UTC, "" for none.
func rfc3339(unix float64) string {
	if unix == 0 {
		return ""
	}
	sec, frac := math.Modf(unix)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC().Format(time.RFC3339Nano)
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

type eventJSON struct {
	Kind string `json:"kind"`
	Step string `json:"step"`
	// StepEN is the step's English label beside its Chinese name ("review
	// #1" for 执行-评审#1; "" for none), as the terminal shows it.
	StepEN string          `json:"step_en"`
	Time   string          `json:"time"`
	Data   map[string]any  `json:"data"`
	Raw    json.RawMessage `json:"raw"`
}

func eventOut(e harness.Event) eventJSON {
	o := eventJSON{Kind: e.Kind, Step: e.Step, StepEN: stepEN(e.Step), Data: e.Data, Raw: e.Raw}
	if !e.Time.IsZero() {
		o.Time = e.Time.UTC().Format(time.RFC3339Nano)
	}
	if o.Data == nil {
		o.Data = map[string]any{}
	}
	if len(o.Raw) == 0 {
		o.Raw = json.RawMessage("null")
	}
	return o
}

// stepResultJSON is harness.StepResult on the wire: its fields, with the
// times as RFC 3339, the elapsed seconds added, and the fields StepResult
// omits when empty shadowed by ones always present.
type stepResultJSON struct {
	Kind string `json:"kind"`
	harness.StepResult
	StepEN    string  `json:"step_en"` // the English label beside Step
	SessionID string  `json:"session_id"`
	Error     string  `json:"error"`
	StartedAt string  `json:"started_at"`
	EndedAt   string  `json:"ended_at"`
	Seconds   float64 `json:"seconds"`
	// Structured is the step's typed answer (a judge's verdict, a goal as
	// the model gave it), {} for none.
	Structured json.RawMessage `json:"structured_output"`
}

func stepResultOut(r harness.StepResult) stepResultJSON {
	o := stepResultJSON{Kind: "step_result", StepResult: r, StepEN: stepEN(r.Step), SessionID: r.SessionID, Error: r.Error,
		StartedAt: rfc3339(r.StartedAt), EndedAt: rfc3339(r.EndedAt), Structured: r.Structured}
	if len(o.Structured) == 0 {
		o.Structured = json.RawMessage("{}")
	}
	o.Errors, o.Retired = orEmpty(r.Errors), orEmpty(r.Retired)
	if r.EndedAt > r.StartedAt && r.StartedAt > 0 {
		o.Seconds = r.EndedAt - r.StartedAt
	}
	return o
}

func stepResultsOut(rs []harness.StepResult) []stepResultJSON {
	out := make([]stepResultJSON, 0, len(rs))
	for _, r := range rs {
		out = append(out, stepResultOut(r))
	}
	return out
}

type flowResultJSON struct {
	Kind      string `json:"kind"`
	OK        bool   `json:"ok"`
	ExitCode  int    `json:"exit_code"`
	Error     string `json:"error"`
	Run       string `json:"run"`
	RunDir    string `json:"run_dir"`
	Events    string `json:"events"`
	Workbench string `json:"workbench"`
	Brief     string `json:"brief"`
	Goal      string `json:"goal"`
	// Verdict, Checks, Failed and Reason are the last judge round as
	// flower decided it (flow.Verdict.Decision: the typed verdict's fields).
	Verdict string              `json:"verdict"`
	Checks  []flow.VerdictCheck `json:"checks"`
	Failed  []string            `json:"failed"`
	Reason  string              `json:"reason"`
	CostUSD float64             `json:"cost_usd"`
	Seconds float64             `json:"seconds"`
	Steps   []stepResultJSON    `json:"steps"`
	Unread  int                 `json:"unread_messages"`
}

func flowResultOut(o flowOutcome) flowResultJSON {
	return flowResultJSON{Kind: "flow_result", OK: o.OK, ExitCode: o.ExitCode, Error: o.Error, Run: o.Run, RunDir: o.RunDir,
		Events: o.Events, Workbench: o.Workbench, Brief: o.Brief, Goal: o.Goal, Verdict: o.Verdict, Checks: orEmpty(o.Decision.Checks),
		Failed: orEmpty(o.Decision.Failed), Reason: o.Decision.Reason, CostUSD: o.CostUSD,
		Seconds: o.Seconds, Steps: stepResultsOut(o.Steps), Unread: o.Unread}
}

type runJSON struct {
	Kind      string `json:"kind"`
	Run       string `json:"run"`
	Workspace string `json:"workspace"`
	StartedAt string `json:"started_at"`
	UpdatedAt string `json:"updated_at"`
	Outcome   string `json:"outcome"` // runOutcome's words
	// Altered says where the run's record stops being flower's (outcome
	// is then "altered"): harness.RecordCheck.
	Altered string  `json:"altered"`
	Verdict string  `json:"verdict"` // the last review's: achieved, not_yet, unreachable or ""
	Steps   int     `json:"steps"`
	Failed  int     `json:"failed"`
	CostUSD float64 `json:"cost_usd"`
}

// runTotals counts a manifest row's steps, failures and cost.
func runTotals(r harness.ManifestRow) (failed int, cost float64) {
	for _, s := range r.Results {
		cost += s.CostUSD
		if !s.OK && !s.Cancelled() { // an interrupted step is no failure
			failed++
		}
	}
	return failed, cost
}

func runOut(r harness.ManifestRow) runJSON {
	failed, cost := runTotals(r)
	outcome, verdict := runOutcome(r)
	return runJSON{Kind: "run", Run: r.Run, Workspace: r.Workspace, StartedAt: rfc3339(r.StartedAt), UpdatedAt: rfc3339(r.UpdatedAt),
		Outcome: outcome, Verdict: verdict, Steps: len(r.Results), Failed: failed, CostUSD: cost}
}

type runDetailJSON struct {
	Kind          string           `json:"kind"`
	Run           string           `json:"run"`
	Workspace     string           `json:"workspace"`
	StartedAt     string           `json:"started_at"`
	UpdatedAt     string           `json:"updated_at"`
	Outcome       string           `json:"outcome"`
	Altered       string           `json:"altered"`
	Verdict       string           `json:"verdict"`
	Events        string           `json:"events"`
	EventCount    int              `json:"event_count"`
	SkippedEvents int              `json:"skipped_events"`
	Tally         harness.RunTally `json:"tally"`
	Denials       []denialJSON     `json:"denials"` // each tool call a guard refused
	Spills        []spillJSON      `json:"spills"`  // each output moved into the workbench
	CostUSD       float64          `json:"cost_usd"`
	Steps         []stepResultJSON `json:"steps"`
	FlowEvents    []eventJSON      `json:"flow_events"` // the workflow's step and task events
}

// toldJSON is `flower tell --json`: where the message landed.
type toldJSON struct {
	Kind   string `json:"kind"` // "told"
	Run    string `json:"run"`
	Step   string `json:"step"`
	StepEN string `json:"step_en"`
}

type sessionJSON struct {
	Kind      string `json:"kind"`
	SessionID string `json:"session_id"`
	Project   string `json:"project"`
	Step      string `json:"step"` // the step of a run in this run dir that ran it, "" if none did
	Run       string `json:"run"`
	Entries   int    `json:"entries"`
	Subagents int    `json:"subagents"`
	UpdatedAt string `json:"updated_at"`
}

func sessionOut(r sessionstore.SessionRef, by stepRef) sessionJSON {
	return sessionJSON{Kind: "session", SessionID: r.Key.SessionID, Project: r.Key.ProjectKey, Step: by.Step, Run: by.Run, Entries: r.Entries, Subagents: r.Subkeys,
		UpdatedAt: time.UnixMilli(r.MTime).UTC().Format(time.RFC3339Nano)}
}

type transcriptJSON struct {
	Kind      string            `json:"kind"`
	SessionID string            `json:"session_id"`
	Project   string            `json:"project"`
	Trimmed   bool              `json:"trimmed"`
	Entries   []json.RawMessage `json:"entries"`
}

type sessionReportJSON struct {
	Kind      string `json:"kind"`
	SessionID string `json:"session_id"`
	Project   string `json:"project"`
	sessionstore.TrimReport
}

type wakeJSON struct {
	Kind string `json:"kind"`
	flow.Wake
	Missing  []string          `json:"missing"`
	Goal     string            `json:"brief_goal"`
	LastRun  string            `json:"last_run"`
	Sessions map[string]string `json:"sessions"`
}

func wakeOut(w flow.Wake) wakeJSON {
	o := wakeJSON{Kind: "wake_state", Wake: w, Missing: orEmpty(w.Missing), Goal: w.BriefGoal, LastRun: w.LastRun, Sessions: w.Sessions}
	if o.Sessions == nil {
		o.Sessions = map[string]string{}
	}
	return o
}

// writeJSON writes v as one compact line.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// stepEN is a step name's English label ("" for no step).
func stepEN(step string) string {
	if step == "" {
		return ""
	}
	return stepLabel(step, false)
}
