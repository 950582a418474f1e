package flow

import (
	"slices"
	"strings"

	"github.com/flowerhq/flower/harness"
)

// Tool groups (unexported: they decide the roles' defaults).
var (
	coordinatorTools = []string{"Agent", "TodoWrite", "Read"}
	webTools         = []string{"WebFetch", "WebSearch"}
	workerTools      = []string{"Read", "Write", "Edit", "Bash", "Glob", "Grep", "WebFetch", "WebSearch"}
	// readTools are "the five" a reading clarifier gets: read-only, no side effects.
	readTools = []string{"Read", "Glob", "Grep", "WebFetch", "WebSearch"}
	// handsOn are never merged into a main thread's allowed tools.
	handsOn = []string{"Write", "Edit", "Bash", "NotebookEdit"}
)

// RoleOptions are the keyword arguments the role factories share. Zero
// values mean "not set"; the factories' own defaults
// (coordinator permission mode "acceptEdits", oracle turns 12 and budget
// $0.5, can_read true) apply unless the option overrides them.
type RoleOptions struct {
	Instructions string
	Model        string
	Effort       string
	// MaxTurns and MaxBudgetUSD override the factory's limit; NoLimit
	// lifts it.
	MaxTurns     int
	MaxBudgetUSD float64
	// NoRead turns can_read off (can_read is on by default).
	NoRead bool
	// NoGlance turns the coordinator's glance off (default on).
	NoGlance bool
	// CanRun gives the judge Bash.
	CanRun bool
	// PermissionMode overrides the coordinator's "acceptEdits".
	PermissionMode string
	Compact        *harness.CompactPolicy
	Hooks          map[string][]harness.HookMatcher
	Env            map[string]string
}

// rules joins a role's rule text with the caller's instructions.
func rules(base, extra string) string {
	if strings.TrimSpace(extra) == "" {
		return base
	}
	return base + "\n\n" + strings.TrimSpace(extra)
}

func addTool(tools []string, t string) []string {
	if t == "" || slices.Contains(tools, t) {
		return tools
	}
	return append(tools, t)
}

// channelTools adds the channel's tools and MCP servers to spec.
func channelTools(spec *harness.AgentSpec, ch Channel, inbox bool) {
	if ch == nil {
		return
	}
	spec.AllowedTools = addTool(spec.AllowedTools, ch.ToolName())
	if inbox {
		spec.AllowedTools = addTool(spec.AllowedTools, ch.InboxToolName())
	}
	spec.MCPServers = ch.MCPServers()
}

// Coordinator builds the main-thread coordinator: decompose, delegate, read
// reports, decide, never do the work by hand. Its allowed tools are Agent,
// TodoWrite and Read (Read only with can_read),
// the workers' web tools and the channel's two tools — nothing else. Fixed: DelegateOnly true,
// Agents = workers, Workbench true. Web tools of the workers are merged into
// its allowed tools (allowed_tools is session-wide: a subagent's tool missing
// from it is "user-rejected" in unattended runs); Write/Edit/Bash never are.
// With a channel both its tools come (ask and inbox).
func Coordinator(name string, instructions string, workers map[string]harness.AgentDefinition, ch Channel, o RoleOptions) harness.AgentSpec {
	spec := harness.NewAgentSpec(name, rules(CoordinatorRules, instructions+"\n"+o.Instructions))
	tools := slices.Clone(coordinatorTools)
	if o.NoRead {
		tools = slices.DeleteFunc(tools, func(t string) bool { return t == "Read" })
	}
	for _, w := range sortedKeys(workers) {
		for _, t := range workers[w].Tools {
			if slices.Contains(webTools, t) {
				tools = addTool(tools, t)
			}
		}
	}
	spec.AllowedTools = tools
	channelTools(&spec, ch, true)
	spec.DelegateOnly = true
	spec.Agents = workers
	spec.Workbench = true
	spec.Glance = !o.NoGlance
	spec.PermissionMode = "acceptEdits"
	if o.PermissionMode != "" {
		spec.PermissionMode = o.PermissionMode
	}
	applyCommon(&spec, o)
	spec.Compact, spec.Hooks, spec.Env = o.Compact, o.Hooks, o.Env
	return spec
}

// WorkerOptions are worker()'s keyword arguments.
type WorkerOptions struct {
	// Tools default to the full worker set.
	Tools          []string
	Model          string // default "inherit"
	Effort         string
	MaxTurns       int
	PermissionMode string
	// Skills are preloaded into the worker.
	Skills []string
	// NoDiscipline leaves WorkerRules out of the prompt.
	NoDiscipline bool
	// Isolate marks the role for a git worktree of its own; the workspace
	// must be a git repository.
	Isolate bool
}

// Worker builds a subagent definition for Coordinator's workers. The mark
// set by Isolate is a field of the definition, so a copy of the value
// keeps it.
func Worker(description, prompt string, o WorkerOptions) harness.AgentDefinition {
	tools := o.Tools
	if tools == nil {
		tools = slices.Clone(workerTools)
	}
	model := o.Model
	if model == "" {
		model = "inherit"
	}
	p := prompt
	if !o.NoDiscipline {
		p = rules(WorkerRules, prompt)
	}
	def := harness.AgentDefinition{
		Description: description, Prompt: p, Tools: tools, Model: model,
		Effort: o.Effort, MaxTurns: o.MaxTurns, PermissionMode: o.PermissionMode, Skills: o.Skills,
	}
	return harness.Isolated(def, o.Isolate)
}

// Clarify builds the clarifier: ask, do nothing, end with exactly four
// sections. Allowed: the channel's ask tool plus the five read tools (unless
// NoRead); no Write/Edit/Agent, Bash only for glances (lookOnly), no
// inbox; Workbench false.
func Clarify(name string, ch Channel, o RoleOptions) harness.AgentSpec {
	spec := harness.NewAgentSpec(name, rules(ClarifyRules, o.Instructions))
	spec.AllowedTools = nil
	channelTools(&spec, ch, false)
	if !o.NoRead {
		spec.AllowedTools = append(spec.AllowedTools, readTools...)
	}
	if spec.AllowedTools == nil {
		spec.AllowedTools = []string{}
	}
	spec.Workbench = false
	lookOnly(&spec, o)
	applyCommon(&spec, o)
	return spec
}

// Judge builds the judge: set the goal before the start, or judge a round
// after it. Allowed: the channel's ask tool, Read, Glob, Grep, glances
// (lookOnly), plus Bash with CanRun (in the read-only sandbox with a
// private scratch when the Runtime's sandbox is on; without it, CanRun lets
// the judge change the workspace). No Write/Edit/Agent, no inbox;
// Workbench false.
func Judge(name string, ch Channel, o RoleOptions) harness.AgentSpec {
	spec := harness.NewAgentSpec(name, rules(JudgeRules, o.Instructions))
	spec.AllowedTools = nil
	channelTools(&spec, ch, false)
	spec.AllowedTools = append(spec.AllowedTools, "Read", "Glob", "Grep")
	if o.CanRun {
		spec.AllowedTools = append(spec.AllowedTools, "Bash")
	}
	spec.Workbench = false
	lookOnly(&spec, o)
	// No worker instructs the judge: CLAUDE.md and .claude/ as the flow
	// found them, never as a worker left them (harness/startmd.go).
	spec.InstructionsAtStart = true
	applyCommon(&spec, o)
	return spec
}

// OracleName is the oracle's default name.
const OracleName = "旁路问答"

// Oracle builds the side-channel answerer: it reads the latest events and
// the workbench and answers "where are we"; no channel (it answers, never
// asks), Workbench true. Defaults: 12 turns, $0.5.
func Oracle(name string, o RoleOptions) harness.AgentSpec {
	if name == "" {
		name = OracleName
	}
	spec := harness.NewAgentSpec(name, rules(OracleRules, o.Instructions))
	spec.AllowedTools = []string{"Read", "Glob", "Grep"}
	spec.Workbench = true
	spec.MaxTurns, spec.MaxBudgetUSD = 12, 0.5
	lookOnly(&spec, o)
	applyCommon(&spec, o)
	return spec
}

// lookOnly marks a read-only role: its Bash glances pass (unless NoGlance)
// and, with the Runtime's sandbox on, every Bash call of it runs in the
// read-only sandbox (a CanRun judge's with a private scratch).
func lookOnly(spec *harness.AgentSpec, o RoleOptions) {
	spec.LookOnly = true
	spec.Glance = !o.NoGlance
}

func applyCommon(spec *harness.AgentSpec, o RoleOptions) {
	if o.Model != "" {
		spec.Model = o.Model
	}
	if o.Effort != "" {
		spec.Effort = o.Effort
	}
	switch {
	case o.MaxTurns == NoLimit:
		spec.MaxTurns = 0
	case o.MaxTurns > 0:
		spec.MaxTurns = o.MaxTurns
	}
	switch {
	case o.MaxBudgetUSD == NoLimit:
		spec.MaxBudgetUSD = 0
	case o.MaxBudgetUSD > 0:
		spec.MaxBudgetUSD = o.MaxBudgetUSD
	}
}

// NoLimit, as RoleOptions.MaxTurns or MaxBudgetUSD, lifts the role's own
// limit (the oracle's 12 turns and $0.5).
const NoLimit = -1

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
