package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Guard names: the first argument of flower-hook.
const (
	GuardDelegate    = "delegate"
	GuardWhitelist   = "whitelist"
	GuardSpill       = "spill"
	GuardIndex       = "index"
	GuardIsolate     = "isolate"
	GuardFence       = "fence"
	GuardIsEphemeral = "is-ephemeral"
)

// Tool groups (hands-on, write-only and bulky tools) and defaults.
const (
	// DefaultDelegateTools is delegate's --tools default: the tools a
	// coordinator's main thread must hand to a subagent.
	DefaultDelegateTools = "Bash|Write|Edit|NotebookEdit"
	// HandsOnTools are the tools whitelist makes exclusive.
	HandsOnTools = DefaultDelegateTools
	// WriteOnlyTools are the tools that write files.
	WriteOnlyTools = "Write|Edit|NotebookEdit"
	// IndexTools is the matcher for the index guard.
	IndexTools = "Write|Edit"
	// BulkyTools is spill's --tools default: the tools whose output can be large.
	BulkyTools = "Bash|Read|Grep|Glob|WebFetch|WebSearch"
	// IsolateTools is the matcher for the isolate guard.
	IsolateTools = "Agent"
	// DefaultSpillThreshold is spill's --threshold default, in characters.
	DefaultSpillThreshold = 4000
	// SpillPreviewChars is how much of a spilled text stays in context.
	SpillPreviewChars = 400
	// DefaultRole is whitelist's --role default ("这个角色", "this role"),
	// the name its deny text uses when none is given.
	DefaultRole = "这个角色"
	// DefaultMaxIndexEntries is how many files INDEX.md lists per folder.
	DefaultMaxIndexEntries = 40
	// SocketEnv names the Unix socket that decisions are reported to.
	SocketEnv = "FLOWER_SOCKET"
)

// Exit codes of Main. Claude Code treats 2 as "block" and every other
// non-zero code as a non-blocking hook error (the tool runs).
const (
	ExitOK    = 0
	ExitError = 1 // a transforming guard failed: the original stands
	ExitDeny  = 2 // deny (PreToolUse) / usage error
)

// Input is the JSON a Claude Code command hook reads on stdin (the fields
// the guards use; reference claude-cli-2.1.328.md §2).
type Input struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolResponse   json.RawMessage `json:"tool_response"`
	ToolUseID      string          `json:"tool_use_id"`
	// AgentID is set only for tool calls made inside a subagent.
	AgentID   string `json:"agent_id"`
	AgentType string `json:"agent_type"`
}

// IsMainThread reports whether the call comes from the session's main
// thread: the CLI puts agent_id into hook input only inside subagents.
func (in Input) IsMainThread() bool { return in.AgentID == "" }

// ErrBadInput is returned (wrapped) for hook input that is not a JSON object.
var ErrBadInput = errors.New("hook input is not a JSON object")

// parseInput decodes hook input. Anything but a JSON object (empty,
// truncated, an array, garbage) is an error wrapping ErrBadInput.
func parseInput(data []byte) (Input, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return Input{}, fmt.Errorf("hooks: parse input: %w", ErrBadInput)
	}
	if in, ok := parseInputFast(data); ok {
		return in, nil
	}
	var in Input
	if err := json.Unmarshal(data, &in); err != nil {
		return Input{}, fmt.Errorf("hooks: parse input: %w: %v", ErrBadInput, err)
	}
	return in, nil
}

// Output is the JSON a hook writes to stdout. The zero value encodes as {}.
type Output struct {
	HookSpecificOutput *SpecificOutput `json:"hookSpecificOutput,omitempty"`
}

// SpecificOutput is Claude Code's hookSpecificOutput.
type SpecificOutput struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string          `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
	UpdatedToolOutput        json.RawMessage `json:"updatedToolOutput,omitempty"`
}

// Verdict is what a guard decided about one tool call.
type Verdict string

// Verdicts, as they appear in the "decision" field of a Report.
const (
	Pass    Verdict = "pass"    // no opinion: the CLI goes on as without the hook
	Allow   Verdict = "allow"   // allow, possibly with an updated input (isolate)
	Deny    Verdict = "deny"    // the tool does not run; Reason goes to the model
	Rewrite Verdict = "rewrite" // PostToolUse: the output was replaced (spill)
)

// Decision is the result of a pure guard rule.
type Decision struct {
	Verdict Verdict
	// Reason is the deny text the model reads.
	Reason string
	// UpdatedInput replaces the whole tool input (Allow).
	UpdatedInput json.RawMessage
	// UpdatedToolOutput replaces the tool output, in the tool's own shape (Rewrite).
	UpdatedToolOutput json.RawMessage
	// Detail goes into the report's detail object.
	Detail map[string]any
}

// Output turns d into the hook's stdout answer for the given event.
func (d Decision) Output(event string) Output {
	switch d.Verdict {
	case Deny:
		return Output{&SpecificOutput{HookEventName: event, PermissionDecision: "deny", PermissionDecisionReason: d.Reason}}
	case Allow:
		return Output{&SpecificOutput{HookEventName: event, PermissionDecision: "allow", UpdatedInput: d.UpdatedInput}}
	case Rewrite:
		return Output{&SpecificOutput{HookEventName: event, UpdatedToolOutput: d.UpdatedToolOutput}}
	}
	return Output{}
}

// reportVersion is the "v" of the socket line.
const reportVersion = 1

// Report is the line flower-hook sends to FLOWER_SOCKET for every decision
// (one JSON object per line, v 1); the harness's socket server decodes it.
type Report struct {
	V         int            `json:"v"`
	Kind      string         `json:"kind"` // always "guard"
	Guard     string         `json:"guard"`
	Decision  Verdict        `json:"decision"`
	Tool      string         `json:"tool"`
	ToolUseID string         `json:"tool_use_id"`
	SessionID string         `json:"session_id"`
	AgentID   string         `json:"agent_id"`
	Detail    map[string]any `json:"detail"`
}

// newReport builds the report of decision d made by guard about in.
func newReport(guard string, in Input, d Decision) Report {
	detail := d.Detail
	if detail == nil {
		detail = map[string]any{}
	}
	if d.Verdict == Deny && d.Reason != "" {
		if _, ok := detail["reason"]; !ok {
			detail["reason"] = d.Reason // what the model was told, for `flower claude` off a terminal
		}
	}
	return Report{V: reportVersion, Kind: "guard", Guard: guard, Decision: d.Verdict, Tool: in.ToolName,
		ToolUseID: in.ToolUseID, SessionID: in.SessionID, AgentID: in.AgentID, Detail: detail}
}
