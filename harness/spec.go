package harness

import (
	"os"
	"strconv"
	"strings"
)

// AgentSpec is the complete declaration of one specialised agent. BuildArgs
// compiles it into a claude command line.
//
// Go zero values differ from the defaults in three fields; build specs
// with NewAgentSpec to get the defaults (AllowedTools Read/Glob/Grep,
// PermissionMode "default", Workbench true). MaxTurns 0 and MaxBudgetUSD 0
// mean "no limit".
type AgentSpec struct {
	Name            string
	Instructions    string
	AllowedTools    []string
	DisallowedTools []string
	Model           string
	Effort          string
	MaxTurns        int
	MaxBudgetUSD    float64
	PermissionMode  string
	// Agents are the subagents, sent as --agents JSON; nil means none.
	Agents map[string]AgentDefinition
	// MCPServers go into --mcp-config as {"mcpServers": MCPServers}.
	MCPServers map[string]any
	// Hooks are extra settings.json hooks, merged before flower's guards
	// (merge_hooks: appended per event, never deduplicated).
	Hooks   map[string][]HookMatcher
	Compact *CompactPolicy
	Env     map[string]string
	// Glance lets a delegate_only main thread run ephemeral Bash itself.
	Glance bool
	// Workbench injects the Runtime's workbench (index, rules, spill) when
	// the Runtime has one.
	Workbench bool
	// DelegateOnly installs the delegate guard alone (no whitelist guard).
	DelegateOnly bool
	// LookOnly marks a read-only role (judge, goal, clarify, oracle): with
	// Glance its whitelist lets Bash glances through, and when the
	// Runtime's sandbox is on (Options.Sandbox) every Bash call of its main
	// thread runs in the read-only sandbox. A delegate_only main thread's
	// glances are sandboxed without it.
	LookOnly bool
	// JSONSchema, when set, is passed as --json-schema: the CLI adds a
	// StructuredOutput tool with this input schema, and the value the
	// model gives it comes back as StepResult.Structured.
	JSONSchema string
	// InstructionsAtStart keeps the workspace's CLAUDE.md files and
	// .claude/ settings out of the step, giving it the CLAUDE.md files as
	// they were when the Runtime opened instead (startmd.go): for steps no
	// worker may instruct (the judge, the goal step).
	InstructionsAtStart bool
}

// NewAgentSpec returns an AgentSpec with the defaults: Read/Glob/Grep,
// permission mode "default", a workbench.
func NewAgentSpec(name, instructions string) AgentSpec {
	return AgentSpec{
		Name:           name,
		Instructions:   instructions,
		AllowedTools:   []string{"Read", "Glob", "Grep"},
		PermissionMode: "default",
		Workbench:      true,
	}
}

// AgentDefinition is one subagent of AgentSpec.Agents, in the CLI's
// --agents JSON shape (camelCase keys, empty fields dropped).
type AgentDefinition struct {
	Description     string   `json:"description"`
	Prompt          string   `json:"prompt"`
	Tools           []string `json:"tools,omitempty"`
	DisallowedTools []string `json:"disallowedTools,omitempty"`
	Model           string   `json:"model,omitempty"`
	Effort          string   `json:"effort,omitempty"`
	MaxTurns        int      `json:"maxTurns,omitempty"`
	PermissionMode  string   `json:"permissionMode,omitempty"`
	// Skills names the skills preloaded into the subagent.
	Skills []string `json:"skills,omitempty"`
	// Isolate marks the role as wanting its own git worktree; it never
	// reaches the CLI, the isolate guard reads it.
	Isolate bool `json:"-"`
}

// Isolated returns a copy of a marked (or unmarked) for worktree isolation.
func Isolated(a AgentDefinition, flag bool) AgentDefinition {
	a.Isolate = flag
	return a
}

// WantsIsolation reports whether a subagent definition is marked isolated.
func WantsIsolation(a *AgentDefinition) bool { return a != nil && a.Isolate }

// HookMatcher is one settings.json hook group: a tool-name matcher and the
// command hooks run for it.
type HookMatcher struct {
	Matcher string        `json:"matcher,omitempty"`
	Hooks   []HookCommand `json:"hooks"`
}

// HookCommand is one settings.json command hook.
type HookCommand struct {
	Type    string `json:"type"` // "command"
	Command string `json:"command"`
	Timeout int    `json:"timeout,omitempty"` // seconds
}

// MergeHooks appends hook groups per event name: extend,
// no deduplication; empty events are dropped.
func MergeHooks(groups ...map[string][]HookMatcher) map[string][]HookMatcher {
	out := map[string][]HookMatcher{}
	for _, g := range groups {
		for ev, ms := range g {
			out[ev] = append(out[ev], ms...)
		}
	}
	for ev, ms := range out {
		if len(ms) == 0 {
			delete(out, ev)
		}
	}
	return out
}

// CompactPolicy is the switchboard of the CLI's auto-compact: it only
// decides whether compaction triggers, through env.
// Mode is "auto" (CLI default), "off" (never auto-compact: flower hands off
// instead) or "window" (auto-compact with Window as the context size).
type CompactPolicy struct {
	Mode   string
	Window int // 0 = the CLI's own idea of the window
}

// Env returns the environment variables for the child process.
func (p CompactPolicy) Env() map[string]string {
	env := map[string]string{}
	switch p.Mode {
	case "off", "never", "handoff":
		env["DISABLE_AUTO_COMPACT"] = "1"
	case "", "auto":
	}
	if p.Window > 0 {
		env["CLAUDE_CODE_AUTO_COMPACT_WINDOW"] = strconv.Itoa(p.Window)
	}
	return env
}

// HandoffPolicy says when a full context is handed to a fresh session
// instead of being compacted.
type HandoffPolicy struct {
	Enabled        bool
	Window         int
	Headroom       int
	MaxGenerations int
}

// NewHandoffPolicy returns the defaults: enabled, DefaultWindow(),
// headroom 50_000, 8 generations.
func NewHandoffPolicy() HandoffPolicy {
	return HandoffPolicy{Enabled: true, Window: DefaultWindow(), Headroom: DefaultHeadroom, MaxGenerations: 8}
}

// DefaultHeadroom is the default HandoffPolicy.Headroom: the tokens left
// free below the window.
const DefaultHeadroom = 50_000

// At is the context level that ends an attempt with HandoffDue:
// max(10_000, window - headroom). A zero Window or Headroom means the
// default (DefaultWindow(), DefaultHeadroom), never "hand off at 10k".
func (p HandoffPolicy) At() int {
	window, headroom := p.Window, p.Headroom
	if window <= 0 {
		window = DefaultWindow()
	}
	if headroom <= 0 {
		headroom = DefaultHeadroom
	}
	return max(10_000, window-headroom)
}

// WarnAt is the level of the handoff "near" event: max(1_000, at - 20_000).
func (p HandoffPolicy) WarnAt() int { return max(1_000, p.At()-20_000) }

// DefaultWindow estimates the context window from ANTHROPIC_MODEL or
// ANTHROPIC_DEFAULT_OPUS_MODEL: a "[1m]" suffix or "1m" in the name →
// 1_000_000, otherwise 200_000. Guessing too large is not fatal: the API's
// "prompt is too long" triggers an immediate (degraded) handoff.
func DefaultWindow() int {
	return windowFor(os.Getenv("ANTHROPIC_MODEL") + " " + os.Getenv("ANTHROPIC_DEFAULT_OPUS_MODEL"))
}

func windowFor(model string) int {
	m := strings.ToLower(model)
	if strings.Contains(m, "[1m]") || strings.Contains(m, "-1m") || strings.Contains(m, "1m]") {
		return 1_000_000
	}
	return 200_000
}
