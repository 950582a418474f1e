package harness

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/flowerhq/flower/hooks"
)

// Tool groups of the guard layer; they pick the default matchers.
// flower-hook defines them (its flags default to them), so the settings.json
// matchers and the guards' own tool lists cannot drift apart.
const (
	HandsOn   = hooks.HandsOnTools
	WriteOnly = hooks.WriteOnlyTools
	Bulky     = hooks.BulkyTools
)

// BuildOptions are build_options' keyword arguments plus what a Go process
// needs to say explicitly (the hook binary, the socket).
type BuildOptions struct {
	Cwd      string
	Resume   string
	Fork     bool
	ResumeAt string
	// PluginDir is passed as --plugin-dir when non-empty (use_plugin).
	PluginDir string
	AddDirs   []string
	// Prelude is prepended to the appended system prompt.
	Prelude string
	// Workbench, when non-nil and spec.Workbench is true, adds its prompt
	// block and installs the index/spill (and delegate/isolate) guards.
	Workbench      *Workbench
	SpillThreshold int // 0: no spill guard
	// HookPath is the flower-hook binary the settings.json commands call.
	HookPath string
	// SessionMirror adds --session-mirror (the session store is on).
	SessionMirror bool
	// RunDir is flower's run directory, which the fence keeps the step's
	// write tools out of.
	RunDir string
	// AllowDirs widen the fence beyond the workspace and the workbench
	// (--allow-dir); they are passed to claude as --add-dir too.
	AllowDirs []string
	// PartialMessages adds --include-partial-messages: a line per streamed
	// piece of a turn, which the idle limit (Resilience.IdleTimeout) needs.
	PartialMessages bool
	// SettingsPath, AgentsPath and MCPPath are where the step's generated
	// files will be written (the argv names them); empty: inline JSON.
	SettingsPath, MCPPath string
	// Sandbox is Options.Sandbox: read-only main threads' Bash runs in the
	// read-only sandbox.
	Sandbox bool
	// Authority pins flower's keys in the settings layer (PinnedSettings
	// with Pins) and adds the SessionStart hook that proves the guards
	// live (hooks.GuardLive); the Runtime sets it for every step.
	Authority bool
	Pins      map[string]string
	// StartInstructions are the workspace's CLAUDE.md files as they were
	// when the Runtime opened (for spec.InstructionsAtStart).
	StartInstructions string
}

// Built is a compiled AgentSpec: the argv after the claude binary, the extra
// environment, and the generated documents (nil when not needed).
type Built struct {
	Args     []string
	Env      map[string]string
	Settings map[string]any // settings.json ({"hooks": …})
	Agents   []byte         // --agents JSON
	MCP      []byte         // --mcp-config JSON
}

// shellQuote quotes s for the shell the CLI runs hook commands through.
func shellQuote(s string) string { return hooks.ShellQuote(s) }

func hookCmd(hookPath string, args ...string) HookCommand {
	parts := []string{servedCmd(hookPath, args)}
	for _, a := range args {
		parts = append(parts, shellQuote(a))
	}
	return HookCommand{Type: "command", Command: strings.Join(parts, " "), Timeout: 30}
}

// denyHookCmd is hookCmd for a deny guard (delegate, whitelist): wrapped by
// hooks.DenyCommand so that a missing or crashing flower-hook denies
// instead of letting the tool run.
func denyHookCmd(hookPath string, args ...string) HookCommand {
	return HookCommand{Type: "command", Command: hooks.DenyCommand(servedCmd(hookPath, args), args...), Timeout: 30}
}

// WhitelistGuard returns the PreToolUse matcher that makes allowed_tools
// exclusive for the four hands-on tools, or nil when nothing is banned.
func WhitelistGuard(hookPath string, allowed []string, role string) *HookMatcher {
	return lookOnlyGuard(hookPath, allowed, role, false, false)
}

// lookOnlyGuard is WhitelistGuard for a read-only role: with glance its
// Bash glances pass (hooks.whitelistIn), with sandbox every Bash call of
// its main thread that runs is put into the read-only sandbox; the matcher
// then covers Bash even when Bash is allowed.
func lookOnlyGuard(hookPath string, allowed []string, role string, glance, sandbox bool) *HookMatcher {
	var banned []string
	for _, t := range strings.Split(HandsOn, "|") {
		if !slices.Contains(allowed, t) || t == "Bash" && sandbox {
			banned = append(banned, t)
		}
	}
	if len(banned) == 0 {
		return nil
	}
	if role == "" {
		role = "这个角色"
	}
	args := []string{hooks.GuardWhitelist, "--allow", strings.Join(allowed, ","), "--role", role}
	if glance {
		args = append(args, "--glance")
	}
	if sandbox {
		args = append(args, "--sandbox")
	}
	return &HookMatcher{Matcher: strings.Join(banned, "|"), Hooks: []HookCommand{denyHookCmd(hookPath, args...)}}
}

// WorkbenchHooks installs what a workbench needs:
// PreToolUse delegate guard when delegateOnly, isolate guard when some
// agent is marked isolated; PostToolUse index guard always, spill guard when
// spillThreshold > 0. Events with no matcher are left out.
func WorkbenchHooks(hookPath string, wb *Workbench, delegateOnly bool, spillThreshold int, agents map[string]AgentDefinition, allowGlance, sandbox bool) map[string][]HookMatcher {
	out := map[string][]HookMatcher{}
	if delegateOnly {
		out["PreToolUse"] = append(out["PreToolUse"], DelegateGuard(hookPath, allowGlance, sandbox))
	}
	var marked []string
	for name, a := range agents {
		if a.Isolate {
			marked = append(marked, name)
		}
	}
	if len(marked) > 0 {
		out["PreToolUse"] = append(out["PreToolUse"], IsolateGuard(hookPath, marked))
	}
	out["PostToolUse"] = append(out["PostToolUse"], IndexGuard(hookPath, wb))
	if spillThreshold > 0 {
		out["PostToolUse"] = append(out["PostToolUse"], SpillGuard(hookPath, wb.Root(), spillThreshold))
	}
	return out
}

// DelegateGuard is the PreToolUse matcher that keeps a main thread's hands
// off Bash/Write/Edit/NotebookEdit; with glance,
// read-only Bash (hooks.IsEphemeral) passes.
func DelegateGuard(hookPath string, glance, sandbox bool) HookMatcher {
	args := []string{hooks.GuardDelegate}
	if glance {
		args = append(args, "--glance")
		if sandbox {
			args = append(args, "--sandbox")
		}
	}
	return HookMatcher{Matcher: HandsOn, Hooks: []HookCommand{denyHookCmd(hookPath, args...)}}
}

// IsolateGuard is the PreToolUse matcher on Agent that sends the marked
// roles into their own git worktree.
func IsolateGuard(hookPath string, roles []string) HookMatcher {
	roles = slices.Clone(roles)
	sort.Strings(roles)
	return HookMatcher{Matcher: hooks.IsolateTools, Hooks: []HookCommand{hookCmd(hookPath, hooks.GuardIsolate, "--roles", strings.Join(roles, ","))}}
}

// IndexGuard is the PostToolUse matcher that refreshes the workbench's
// INDEX.md after a Write or Edit inside it:
// the hook gets the workbench's root and its max_index_entries, so the index
// it writes is the one Workbench.Refresh writes.
func IndexGuard(hookPath string, wb *Workbench) HookMatcher {
	n := wb.MaxIndexEntries
	if n <= 0 {
		n = hooks.DefaultMaxIndexEntries
	}
	return HookMatcher{Matcher: hooks.IndexTools, Hooks: []HookCommand{hookCmd(hookPath, hooks.GuardIndex,
		"--dir", wb.Root(), "--max-entries", strconv.Itoa(n))}}
}

// SpillGuard is the PostToolUse matcher that moves tool output over
// threshold characters into dir/spill/.
func SpillGuard(hookPath, dir string, threshold int) HookMatcher {
	return HookMatcher{Matcher: Bulky, Hooks: []HookCommand{hookCmd(hookPath, hooks.GuardSpill, "--dir", dir, "--threshold", strconv.Itoa(threshold))}}
}

// FenceGuard is the PreToolUse matcher on Write|Edit|NotebookEdit (main
// thread and subagents) that keeps writes inside the workspace, the
// workbench and allowDirs, and off flower's own state: the run dir and the
// workbench's ProtectedPaths (hooks.Fence). wb may be nil.
func FenceGuard(hookPath, workspace, runDir string, wb *Workbench, allowDirs []string) HookMatcher {
	args := []string{hooks.GuardFence, "--root", workspace}
	if wb != nil {
		args = append(args, "--root", wb.Root())
	}
	for _, d := range allowDirs {
		args = append(args, "--root", d)
	}
	if runDir != "" {
		args = append(args, "--protect", runDir)
	}
	if wb != nil {
		for _, p := range wb.protectedPaths() {
			args = append(args, "--protect", p)
		}
	}
	return HookMatcher{Matcher: hooks.FenceTools, Hooks: []HookCommand{denyHookCmd(hookPath, args...)}}
}

// liveGuard is the SessionStart hook that reports the guards live over
// the socket before the step's prompt is sent (hooks.GuardLive).
func liveGuard(hookPath string) HookMatcher {
	return HookMatcher{Hooks: []HookCommand{hookCmd(hookPath, hooks.GuardLive)}}
}

// StepHooks merges spec.Hooks, the workbench hooks (only with a workbench
// and spec.Workbench) and the whitelist guard (skipped for delegate_only
// roles), as Runtime._attempt does with merge_hooks, then the fence
// whenever the workspace is known (o.Cwd: every step the Runtime runs).
func StepHooks(spec AgentSpec, o BuildOptions) map[string][]HookMatcher {
	groups := []map[string][]HookMatcher{spec.Hooks}
	if o.Workbench != nil && spec.Workbench {
		groups = append(groups, WorkbenchHooks(o.HookPath, o.Workbench, spec.DelegateOnly, o.SpillThreshold, spec.Agents, spec.Glance, o.Sandbox))
	}
	if !spec.DelegateOnly {
		look := spec.LookOnly && spec.Glance
		if m := lookOnlyGuard(o.HookPath, spec.AllowedTools, spec.Name, look, spec.LookOnly && o.Sandbox); m != nil {
			groups = append(groups, map[string][]HookMatcher{"PreToolUse": {*m}})
		}
	}
	if o.Cwd != "" {
		groups = append(groups, map[string][]HookMatcher{"PreToolUse": {FenceGuard(o.HookPath, o.Cwd, o.RunDir, o.Workbench, o.AllowDirs)}})
	}
	if o.Authority && o.HookPath != "" {
		groups = append(groups, map[string][]HookMatcher{"SessionStart": {liveGuard(o.HookPath)}})
	}
	return MergeHooks(groups...)
}

// systemAppend is the text given to --append-system-prompt: prelude,
// instructions, then the workbench block.
func systemAppend(spec AgentSpec, o BuildOptions) string {
	var parts []string
	start := ""
	if spec.InstructionsAtStart {
		start = o.StartInstructions
	}
	for _, p := range []string{o.Prelude, spec.Instructions, start} {
		if strings.TrimSpace(p) != "" {
			parts = append(parts, p)
		}
	}
	if o.Workbench != nil && spec.Workbench {
		parts = append(parts, o.Workbench.PromptBlock())
	}
	return strings.Join(parts, "\n\n")
}

// stepSettings is the step's settings layer: its hooks (StepHooks) and,
// with o.Authority, the pinned keys (PinnedSettings); nil when there are
// no hooks.
func stepSettings(spec AgentSpec, o BuildOptions) (map[string]any, error) {
	hooks := StepHooks(spec, o)
	if len(hooks) == 0 {
		return nil, nil
	}
	if o.HookPath == "" && (o.Workbench != nil && spec.Workbench || !spec.DelegateOnly || o.Cwd != "") {
		return nil, fmt.Errorf("harness: guards need the flower-hook binary (no hook path)")
	}
	settings := map[string]any{"hooks": hooks}
	if o.Authority {
		for k, v := range PinnedSettings(o.Pins) {
			settings[k] = v
		}
	}
	return settings, nil
}

// limitArgs are the spec's effort, limits, output schema and permission
// mode as claude flags.
func limitArgs(spec AgentSpec) []string {
	var a []string
	if spec.Effort != "" {
		a = append(a, "--effort="+spec.Effort)
	}
	if spec.MaxTurns > 0 {
		a = append(a, "--max-turns="+strconv.Itoa(spec.MaxTurns))
	}
	if spec.MaxBudgetUSD > 0 {
		a = append(a, "--max-budget-usd="+strconv.FormatFloat(spec.MaxBudgetUSD, 'f', -1, 64))
	}
	if spec.JSONSchema != "" {
		a = append(a, "--json-schema="+spec.JSONSchema)
	}
	if pm := spec.PermissionMode; pm != "" && pm != "default" {
		a = append(a, "--permission-mode="+pm)
	}
	return a
}

// BuildArgs compiles an AgentSpec into the claude argv (after the binary),
// env additions and generated documents. The launch
// flags are those of the official SDKs: stream-json in and out, values as
// --flag=value.
func BuildArgs(spec AgentSpec, o BuildOptions) (Built, error) {
	b := Built{Env: map[string]string{}}
	a := []string{"-p", "--output-format=stream-json", "--verbose", "--input-format=stream-json"}
	if s := systemAppend(spec, o); s != "" {
		a = append(a, "--append-system-prompt="+s)
	}
	if len(spec.AllowedTools) > 0 {
		a = append(a, "--allowedTools="+strings.Join(spec.AllowedTools, ","))
	}
	if len(spec.DisallowedTools) > 0 {
		a = append(a, "--disallowedTools="+strings.Join(spec.DisallowedTools, ","))
	}
	if spec.Model != "" {
		a = append(a, "--model="+spec.Model)
	}
	if spec.InstructionsAtStart {
		a = append(a, "--setting-sources=user")
		b.Env["CLAUDE_CODE_DISABLE_CLAUDE_MDS"] = "1"
	}
	a = append(a, limitArgs(spec)...)
	if len(spec.Agents) > 0 {
		js, err := json.Marshal(spec.Agents)
		if err != nil {
			return Built{}, fmt.Errorf("harness: agents: %w", err)
		}
		b.Agents = js
		a = append(a, "--agents="+string(js))
	}
	if len(spec.MCPServers) > 0 {
		js, err := json.Marshal(map[string]any{"mcpServers": spec.MCPServers})
		if err != nil {
			return Built{}, fmt.Errorf("harness: mcp servers: %w", err)
		}
		b.MCP = js
		if o.MCPPath != "" {
			a = append(a, "--mcp-config="+o.MCPPath)
		} else {
			a = append(a, "--mcp-config="+string(js))
		}
	}
	settings, err := stepSettings(spec, o)
	if err != nil {
		return Built{}, err
	}
	if settings != nil {
		b.Settings = settings
		if o.SettingsPath != "" {
			a = append(a, "--settings="+o.SettingsPath)
		} else {
			js, err := json.Marshal(b.Settings)
			if err != nil {
				return Built{}, fmt.Errorf("harness: settings: %w", err)
			}
			a = append(a, "--settings="+string(js))
		}
	}
	if o.PluginDir != "" {
		a = append(a, "--plugin-dir="+o.PluginDir)
	}
	for _, d := range slices.Concat(o.AddDirs, o.AllowDirs) {
		a = append(a, "--add-dir="+d)
	}
	if o.Resume != "" {
		a = append(a, "--resume="+o.Resume)
		if o.Fork {
			a = append(a, "--fork-session")
		}
		if o.ResumeAt != "" {
			a = append(a, "--resume-session-at="+o.ResumeAt)
		}
	}
	if o.SessionMirror {
		a = append(a, "--session-mirror")
	}
	if o.PartialMessages {
		a = append(a, "--include-partial-messages")
	}
	if spec.Compact != nil {
		for k, v := range spec.Compact.Env() {
			b.Env[k] = v
		}
	}
	for k, v := range spec.Env {
		b.Env[k] = v
	}
	b.Args = a
	return b, nil
}
