package harness

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flowerhq/flower/hooks"
)

func TestBuildArgs_Roles(t *testing.T) {
	wb := &Workbench{Workspace: "/ws", Home: "/runs/workbench"}
	const hook = "/bin/flower-hook"
	coord := NewAgentSpec("coordinator", "COORD_RULES")
	coord.AllowedTools = []string{"Agent", "TodoWrite", "Read", "Glob", "Grep"}
	coord.DelegateOnly, coord.Glance, coord.PermissionMode = true, true, "acceptEdits"
	coord.Agents = map[string]AgentDefinition{
		"worker":   {Description: "w", Prompt: "WORKER", Tools: []string{"Bash", "Write"}, Model: "inherit"},
		"isolated": Isolated(AgentDefinition{Description: "i", Prompt: "ISO"}, true),
	}
	judge := NewAgentSpec("judge", "JUDGE_RULES")
	judge.AllowedTools = []string{"Read", "Glob", "Grep", "Bash"}
	judge.Workbench = false
	worker := NewAgentSpec("worker", "W")
	worker.AllowedTools = []string{"Read", "Write", "Edit", "Bash", "NotebookEdit"}
	full := NewAgentSpec("full", "F")
	full.DisallowedTools = []string{"WebFetch"}
	full.Model, full.Effort, full.MaxTurns, full.MaxBudgetUSD = "sonnet", "high", 7, 0.25
	full.MCPServers = map[string]any{"chan": map[string]any{"command": "flower", "args": []string{"mcp-channel"}}}
	full.Compact = &CompactPolicy{Mode: "off", Window: 150000}
	full.Env = map[string]string{"X": "1"}
	full.Hooks = map[string][]HookMatcher{"Stop": {{Hooks: []HookCommand{{Type: "command", Command: "mine"}}}}}

	tests := []struct {
		name      string
		spec      AgentSpec
		opts      BuildOptions
		wantArgs  []string // must appear, in this order relative to each other
		noArgs    []string // prefixes that must not appear
		wantHooks map[string][]string
		wantEnv   map[string]string
	}{
		{
			name:     "plain without workbench: whitelist bans the four hands-on tools",
			spec:     NewAgentSpec("plain", "PLAIN"),
			opts:     BuildOptions{HookPath: hook},
			wantArgs: []string{"-p", "--output-format=stream-json", "--verbose", "--input-format=stream-json", "--append-system-prompt=PLAIN", "--allowedTools=Read,Glob,Grep"},
			noArgs:   []string{"--permission-mode", "--agents", "--mcp-config", "--resume", "--session-mirror", "--model"},
			wantHooks: map[string][]string{"PreToolUse": {
				"Bash|Write|Edit|NotebookEdit => " + hooks.DenyCommand("/bin/flower-hook", "whitelist", "--allow", "Read,Glob,Grep", "--role", "plain"),
			}},
		},
		{
			name: "coordinator with workbench: delegate (glance) + isolate, index + spill, no whitelist",
			spec: coord,
			opts: BuildOptions{HookPath: hook, Workbench: wb, SpillThreshold: 4000, SessionMirror: true, Resume: "sid", Fork: true, ResumeAt: "uuid-1", SettingsPath: "/r/s/settings.json"},
			wantArgs: []string{"--allowedTools=Agent,TodoWrite,Read,Glob,Grep", "--permission-mode=acceptEdits",
				"--settings=/r/s/settings.json", "--resume=sid", "--fork-session", "--resume-session-at=uuid-1", "--session-mirror"},
			wantHooks: map[string][]string{
				"PreToolUse": {
					"Bash|Write|Edit|NotebookEdit => " + hooks.DenyCommand("/bin/flower-hook", "delegate", "--glance"),
					"Agent => /bin/flower-hook isolate --roles isolated",
				},
				"PostToolUse": {
					"Write|Edit => /bin/flower-hook index --dir /runs/workbench --max-entries 40",
					"Bash|Read|Grep|Glob|WebFetch|WebSearch => /bin/flower-hook spill --dir /runs/workbench --threshold 4000",
				},
			},
		},
		{
			name:     "coordinator without workbench: no wall at all (a warning only)",
			spec:     coord,
			opts:     BuildOptions{HookPath: hook},
			noArgs:   []string{"--settings"},
			wantArgs: []string{"--agents="},
		},
		{
			name:      "judge that can run: Bash stays, Write/Edit/NotebookEdit banned; workbench off for the role",
			spec:      judge,
			opts:      BuildOptions{HookPath: hook, Workbench: wb, SpillThreshold: 4000},
			wantHooks: map[string][]string{"PreToolUse": {"Write|Edit|NotebookEdit => " + hooks.DenyCommand("/bin/flower-hook", "whitelist", "--allow", "Read,Glob,Grep,Bash", "--role", "judge")}},
		},
		{
			name:      "worker with all hands-on tools: nothing to whitelist; workbench hooks only",
			spec:      worker,
			opts:      BuildOptions{HookPath: hook, Workbench: wb},
			wantHooks: map[string][]string{"PostToolUse": {"Write|Edit => /bin/flower-hook index --dir /runs/workbench --max-entries 40"}},
		},
		{
			name: "a step in a workspace: the fence keeps writes to workspace, workbench and allow dirs, off the run dir and flower's notes",
			spec: worker,
			opts: BuildOptions{HookPath: hook, Workbench: &Workbench{Workspace: "/ws", Home: "/runs/workbench", Protected: []string{"/runs/workbench/notes/目标.md"}},
				Cwd: "/ws", RunDir: "/ws/.flower/runs", AllowDirs: []string{"/data"}},
			wantArgs: []string{"--add-dir=/data"},
			wantHooks: map[string][]string{
				"PreToolUse": {"Write|Edit|NotebookEdit => " + hooks.DenyCommand("/bin/flower-hook", "fence", "--root", "/ws", "--root", "/runs/workbench",
					"--root", "/data", "--protect", "/ws/.flower/runs", "--protect", "/runs/workbench/notes/交接-*.md", "--protect", "/runs/workbench/notes/archive",
					"--protect", "/runs/workbench/INDEX.md", "--protect", "/runs/workbench/spill", "--protect", "/runs/workbench/notes/目标.md")},
				"PostToolUse": {"Write|Edit => /bin/flower-hook index --dir /runs/workbench --max-entries 40"},
			},
		},
		{
			name: "every remaining field",
			spec: full,
			opts: BuildOptions{HookPath: hook, PluginDir: "/repo/plugin", AddDirs: []string{"/a", "/b"}, Prelude: "PRELUDE", MCPPath: "/r/mcp.json"},
			wantArgs: []string{"--append-system-prompt=PRELUDE\n\nF", "--disallowedTools=WebFetch", "--model=sonnet", "--effort=high",
				"--max-turns=7", "--max-budget-usd=0.25", "--mcp-config=/r/mcp.json", "--plugin-dir=/repo/plugin", "--add-dir=/a", "--add-dir=/b"},
			wantHooks: map[string][]string{
				"Stop":       {" => mine"},
				"PreToolUse": {"Bash|Write|Edit|NotebookEdit => " + hooks.DenyCommand("/bin/flower-hook", "whitelist", "--allow", "Read,Glob,Grep", "--role", "full")},
			},
			wantEnv: map[string]string{"X": "1", "DISABLE_AUTO_COMPACT": "1", "CLAUDE_CODE_AUTO_COMPACT_WINDOW": "150000"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := BuildArgs(tc.spec, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			pos := -1
			for _, w := range tc.wantArgs {
				i := slices.IndexFunc(b.Args, func(a string) bool { return a == w || strings.HasSuffix(w, "=") && strings.HasPrefix(a, w) })
				if i < 0 {
					t.Fatalf("argv lacks %q:\n%q", w, b.Args)
				}
				if i < pos {
					t.Errorf("%q out of order in %q", w, b.Args)
				}
				pos = i
			}
			for _, n := range tc.noArgs {
				if slices.ContainsFunc(b.Args, func(a string) bool { return strings.HasPrefix(a, n) }) {
					t.Errorf("argv has %q: %q", n, b.Args)
				}
			}
			got := map[string][]string{}
			if b.Settings != nil {
				for ev, ms := range b.Settings["hooks"].(map[string][]HookMatcher) {
					for _, m := range ms {
						for _, h := range m.Hooks {
							got[ev] = append(got[ev], m.Matcher+" => "+h.Command)
						}
					}
				}
			}
			if tc.wantHooks == nil {
				tc.wantHooks = map[string][]string{}
			}
			gj, _ := json.MarshalIndent(got, "", " ")
			wj, _ := json.MarshalIndent(tc.wantHooks, "", " ")
			if string(gj) != string(wj) {
				t.Errorf("hooks =\n%s\nwant\n%s", gj, wj)
			}
			for k, v := range tc.wantEnv {
				if b.Env[k] != v {
					t.Errorf("env %s = %q, want %q", k, b.Env[k], v)
				}
			}
		})
	}
}

func TestBuildArgs_AgentsJSON(t *testing.T) {
	spec := NewAgentSpec("c", "")
	spec.Agents = map[string]AgentDefinition{"w": Isolated(AgentDefinition{Description: "d", Prompt: "p", Tools: []string{"Bash"}, MaxTurns: 3}, true)}
	b, err := BuildArgs(spec, BuildOptions{HookPath: "h"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b.Agents), `{"w":{"description":"d","prompt":"p","tools":["Bash"],"maxTurns":3}}`; got != want {
		t.Errorf("agents = %s, want %s (camelCase, empty fields dropped, no isolate mark)", got, want)
	}
	if slices.ContainsFunc(b.Args, func(a string) bool { return strings.HasPrefix(a, "--append-system-prompt") }) {
		t.Errorf("empty instructions still sent: %q", b.Args)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/bin/flower-hook": "/bin/flower-hook",
		"Read,Glob":        "Read,Glob",
		"/my dir/hook":     "'/my dir/hook'",
		"it's":             `'it'\''s'`,
		"这个角色":             "'这个角色'",
		"":                 "''",
		"$(rm -rf /)":      "'$(rm -rf /)'",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestPolicies(t *testing.T) {
	h := HandoffPolicy{Enabled: true, Window: 200_000, Headroom: 50_000}
	if h.At() != 150_000 || h.WarnAt() != 130_000 {
		t.Errorf("at/warn_at = %d/%d", h.At(), h.WarnAt())
	}
	small := HandoffPolicy{Window: 30_000, Headroom: 50_000}
	if small.At() != 10_000 || small.WarnAt() != 1_000 {
		t.Errorf("floors: at/warn_at = %d/%d", small.At(), small.WarnAt())
	}
	t.Setenv("ANTHROPIC_MODEL", "claude-opus-5-5")
	t.Setenv("ANTHROPIC_DEFAULT_OPUS_MODEL", "")
	for _, tt := range []struct {
		name string
		p    HandoffPolicy
		at   int
	}{
		{"zero headroom means the default 50_000", HandoffPolicy{Enabled: true, Window: 200_000}, 150_000},
		{"zero window means DefaultWindow()", HandoffPolicy{Enabled: true, Headroom: 50_000}, 150_000},
		{"zero value: every default", HandoffPolicy{}, 150_000},
		{"explicit values win", HandoffPolicy{Window: 100_000, Headroom: 20_000}, 80_000},
	} {
		if got := tt.p.At(); got != tt.at {
			t.Errorf("%s: At() = %d, want %d", tt.name, got, tt.at)
		}
	}
	for _, tt := range []struct {
		wb   *Workbench
		want string
	}{
		{&Workbench{Workspace: "/w", MaxIndexEntries: 7}, "/bin/flower-hook index --dir /w/.flower --max-entries 7"},
		{&Workbench{Workspace: "/w"}, "/bin/flower-hook index --dir /w/.flower --max-entries 40"},
	} {
		if got := IndexGuard("/bin/flower-hook", tt.wb).Hooks[0].Command; got != tt.want {
			t.Errorf("IndexGuard = %q, want %q", got, tt.want)
		}
	}
	for model, want := range map[string]int{"claude-opus-5-5": 200_000, "claude-sonnet-5-5[1m]": 1_000_000, "": 200_000} {
		if got := windowFor(model); got != want {
			t.Errorf("windowFor(%q) = %d, want %d", model, got, want)
		}
	}
	r := Resilience{BaseDelay: 2e9, MaxDelay: 10e9}
	for attempt, want := range map[int]float64{1: 2, 2: 4, 3: 8, 4: 10, 9: 10} {
		if got := r.DelayFor(attempt).Seconds(); got != want {
			t.Errorf("DelayFor(%d) = %vs, want %vs", attempt, got, want)
		}
	}
	if env := (CompactPolicy{Mode: "auto"}).Env(); len(env) != 0 {
		t.Errorf("auto compact env = %v, want none", env)
	}
}

func TestBuildArgs_AgentSkills(t *testing.T) {
	spec := NewAgentSpec("c", "")
	spec.Agents = map[string]AgentDefinition{"w": {Description: "d", Prompt: "p", Skills: []string{"debug"}}}
	b, err := BuildArgs(spec, BuildOptions{HookPath: "h"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b.Agents), `{"w":{"description":"d","prompt":"p","skills":["debug"]}}`; got != want {
		t.Errorf("agents = %s, want %s", got, want)
	}
}

// The fence's handoff pattern is the handoff notes' own name.
func TestFenceProtectsTheHandoffNotes(t *testing.T) {
	wb := NewWorkbench("/ws")
	pat := filepath.Join(wb.Notes(), handoffFileName("*"))
	if !slices.Contains(wb.protectedPaths(), pat) {
		t.Errorf("ProtectedPaths %q lack %s", wb.protectedPaths(), pat)
	}
	if ok, _ := filepath.Match(filepath.Base(pat), handoffFileName("执行")); !ok {
		t.Errorf("%s does not match %s", pat, handoffFileName("执行"))
	}
}

// A spec with a JSON schema passes it as --json-schema; control: one
// without passes none.
func TestBuildArgs_JSONSchema(t *testing.T) {
	spec := NewAgentSpec("j", "")
	for _, schema := range []string{`{"type":"object"}`, ""} {
		spec.JSONSchema = schema
		b, err := BuildArgs(spec, BuildOptions{HookPath: "h"})
		if err != nil {
			t.Fatal(err)
		}
		has := slices.Contains(b.Args, "--json-schema="+schema)
		if has != (schema != "") || schema == "" && slices.ContainsFunc(b.Args, func(a string) bool { return strings.HasPrefix(a, "--json-schema") }) {
			t.Errorf("schema %q: args %q", schema, b.Args)
		}
	}
}
