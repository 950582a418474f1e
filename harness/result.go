package harness

import (
	"encoding/json"
	"strings"
	"time"
)

// StepResult is the complete account of one run step.
// Times are Unix seconds (fractional); Context is the last main-thread
// context level in tokens.
type StepResult struct {
	Step      string  `json:"step"`
	SessionID string  `json:"session_id,omitempty"`
	OK        bool    `json:"ok"`
	CostUSD   float64 `json:"cost_usd"`
	NumTurns  int     `json:"num_turns"`
	// Text is the result's text. A step run with AgentSpec.JSONSchema gets
	// the main thread's own words of its last turn here (the CLI's result
	// only echoes the structured value) and the value in Structured.
	Text string `json:"text"`
	// Structured is the result line's structured_output: the value the
	// model gave the StructuredOutput tool (AgentSpec.JSONSchema); nil when
	// there is none — the model never called the tool, or the CLI failed.
	Structured json.RawMessage `json:"structured_output,omitempty"`
	// TextFile (relative to the run dir) holds the whole Text when it is
	// over 64 KiB: the manifest row then keeps its start and TextBytes its
	// length (ResultText reads it back); the Runtime's results keep it all.
	TextFile  string   `json:"text_file,omitempty"`
	TextBytes int      `json:"text_bytes,omitempty"`
	Error     string   `json:"error,omitempty"`
	StartedAt float64  `json:"started_at"`
	EndedAt   float64  `json:"ended_at"`
	Attempts  int      `json:"attempts"`
	Errors    []string `json:"errors"`
	Resumed   bool     `json:"resumed"`
	Retired   []string `json:"retired"`
	Context   int      `json:"context"`
}

// Event is one observation of a run: a stream line turned into a fact, or
// something the Runtime, flower-hook or the flow did. Kind is one of the
// Event* constants (eventkinds.go); Data is the kind's payload, decoded by
// the typed accessors (ev.Guard(), ev.Retry(), …); Raw keeps the stream or
// socket line it came from, when there was one. RunStats folds events.
type Event struct {
	Kind string          `json:"kind"`
	Step string          `json:"step,omitempty"`
	Data map[string]any  `json:"data,omitempty"`
	Raw  json.RawMessage `json:"raw,omitempty"`
	Time time.Time       `json:"time"`
}

// RunOptions are the per-call options of Runtime.Run.
type RunOptions struct {
	StepName string // default: spec.Name
	Resume   string // session id to resume
	Fork     bool   // with Resume: --fork-session
	ResumeAt string // with Resume: --resume-session-at
	// ResumeOwn says Resume is this step's own session from an earlier
	// attempt of the flow (a wake, a retried job): one that nothing holds —
	// the store says it does not, claude's config dir has no transcript,
	// as when that attempt was stopped before claude wrote a line — starts
	// fresh (a "store" event, fresh: true) instead of failing every retry
	// with claude's "No conversation found". A caller's own unknown
	// Resume still fails, as claude's would.
	ResumeOwn bool
	OnEvent   func(Event) // nil: events are only recorded; calls never overlap
}

// Runtime.Run's signature:
//
//	func (r *Runtime) Run(ctx context.Context, spec AgentSpec, prompt string, opts RunOptions) (StepResult, error)
//
// The error is non-nil only when the manifest cannot be written; a failed
// step (bad spec, claude that cannot start, API error, cancelled context)
// returns OK=false with Error set.

// Cancelled reports whether the step ended because its context did (an
// interrupt or a termination of flower): not a failure of the step.
func (r StepResult) Cancelled() bool { return !r.OK && strings.HasPrefix(r.Error, "cancelled: ") }
