package hooks

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func mustMatcher(t *testing.T, expr string) interface{ MatchString(string) bool } {
	t.Helper()
	re, err := toolMatcher(expr)
	if err != nil {
		t.Fatal(err)
	}
	return re
}

func bashInput(cmd string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"command": cmd, "description": "d"})
	return b
}

func TestToolMatcherIsAnchored(t *testing.T) {
	re := mustMatcher(t, DefaultDelegateTools)
	for name, want := range map[string]bool{"Bash": true, "Write": true, "Edit": true, "NotebookEdit": true,
		"MultiEdit": false, "BashOutput": false, "Read": false, "": false} {
		if got := re.MatchString(name); got != want {
			t.Errorf("match %q = %v, want %v", name, got, want)
		}
	}
	if _, err := toolMatcher("(("); err == nil {
		t.Error("bad regexp accepted")
	}
	for _, tt := range []struct {
		expr, name string
		want       bool
	}{
		{"*", "Anything", true}, {"", "Read", true}, {"Web.*", "WebFetch", true}, {"Web.*", "MyWebFetch", false},
		{"mcp__.*", "mcp__srv__tool", true}, {"Bash", "bash", false}, {"Read|Grep", "Grep", true}, {"Read|Grep", "Read|Grep", false},
	} {
		if got := mustMatcher(t, tt.expr).MatchString(tt.name); got != tt.want {
			t.Errorf("matcher %q on %q = %v, want %v", tt.expr, tt.name, got, tt.want)
		}
	}
}

func TestDelegate(t *testing.T) {
	re, _ := toolMatcher(DefaultDelegateTools)
	tests := []struct {
		name   string
		in     Input
		glance bool
		want   Verdict
	}{
		{"main Bash denied", Input{ToolName: "Bash", ToolInput: bashInput("ls")}, false, Deny},
		{"main Write denied", Input{ToolName: "Write", ToolInput: json.RawMessage(`{"file_path":"/x","content":"y"}`)}, false, Deny},
		{"main Edit denied", Input{ToolName: "Edit"}, true, Deny},
		{"main NotebookEdit denied", Input{ToolName: "NotebookEdit"}, false, Deny},
		{"main Read passes", Input{ToolName: "Read"}, false, Pass},
		{"main Agent passes", Input{ToolName: "Agent"}, false, Pass},
		{"subagent Bash passes", Input{ToolName: "Bash", AgentID: "a1", ToolInput: bashInput("rm -rf x")}, false, Pass},
		{"subagent Write passes", Input{ToolName: "Write", AgentID: "a1"}, false, Pass},
		{"glance read-only passes", Input{ToolName: "Bash", ToolInput: bashInput("git status && ls -la")}, true, Pass},
		{"glance writer denied", Input{ToolName: "Bash", ToolInput: bashInput("git commit -am x")}, true, Deny},
		{"glance off read-only denied", Input{ToolName: "Bash", ToolInput: bashInput("ls")}, false, Deny},
		{"glance no command denied", Input{ToolName: "Bash", ToolInput: json.RawMessage(`{}`)}, true, Deny},
		{"glance bad input denied", Input{ToolName: "Bash", ToolInput: json.RawMessage(`[1]`)}, true, Deny},
		{"glance not for Write", Input{ToolName: "Write", ToolInput: bashInput("ls")}, true, Deny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Delegate(tt.in, re, tt.glance)
			if d.Verdict != tt.want {
				t.Fatalf("verdict %s, want %s", d.Verdict, tt.want)
			}
			if d.Verdict == Deny {
				if d.Reason != DelegateReason(tt.in.ToolName) {
					t.Errorf("reason %q, want DelegateReason", d.Reason)
				}
				// What to do instead: the names it must give, whatever the wording.
				for _, s := range []string{tt.in.ToolName, "Agent", ".flower/artifacts/"} {
					if !strings.Contains(d.Reason, s) {
						t.Errorf("reason lacks %q: %s", s, d.Reason)
					}
				}
			}
		})
	}
}

func TestWhitelist(t *testing.T) {
	tests := []struct {
		name    string
		allowed string
		in      Input
		want    Verdict
	}{
		{"read-only role, main Write", "Read,Glob,Grep", Input{ToolName: "Write"}, Deny},
		{"read-only role, main Bash", "Read,Glob,Grep", Input{ToolName: "Bash"}, Deny},
		{"read-only role, main Read", "Read,Glob,Grep", Input{ToolName: "Read"}, Pass},
		{"read-only role, subagent Write", "Read,Glob,Grep", Input{ToolName: "Write", AgentID: "a"}, Pass},
		{"judge can run keeps Bash", "Read,Grep,Bash", Input{ToolName: "Bash"}, Pass},
		{"judge can run loses Write", "Read,Grep,Bash", Input{ToolName: "Write"}, Deny},
		{"judge can run loses Edit", "Read Grep Bash", Input{ToolName: "Edit"}, Deny},
		{"rule syntax counts as tool", "Bash(git log:*)|Read", Input{ToolName: "Bash"}, Pass},
		{"worker full set", "Bash,Write,Edit,NotebookEdit", Input{ToolName: "Edit"}, Pass},
		{"non hands-on tool never blocked", "", Input{ToolName: "WebFetch"}, Pass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Whitelist(tt.in, parseToolList(tt.allowed), "judge")
			if d.Verdict != tt.want {
				t.Fatalf("verdict %s, want %s", d.Verdict, tt.want)
			}
			if d.Verdict == Deny && (d.Reason != WhitelistReason("judge", tt.in.ToolName) || !strings.HasPrefix(d.Reason, "judge") || !strings.Contains(d.Reason, tt.in.ToolName)) {
				t.Errorf("reason %q", d.Reason)
			}
		})
	}
	if d := Whitelist(Input{ToolName: "Write"}, nil, ""); d.Reason != WhitelistReason(DefaultRole, "Write") || !strings.HasPrefix(d.Reason, DefaultRole) {
		t.Errorf("default role: %q", d.Reason)
	}
}

func TestBanned(t *testing.T) {
	for allowed, want := range map[string][]string{
		"":                             {"Bash", "Write", "Edit", "NotebookEdit"},
		"Read,Bash":                    {"Write", "Edit", "NotebookEdit"},
		"Bash,Write,Edit,NotebookEdit": nil,
	} {
		if got := banned(parseToolList(allowed)); !reflect.DeepEqual(got, want) {
			t.Errorf("banned(%q) = %v, want %v", allowed, got, want)
		}
	}
}

func TestIsolate(t *testing.T) {
	roles := []string{"builder", "fixer"}
	tests := []struct {
		name, tool, input string
		want              Verdict
		wantInput         string
	}{
		{"marked role", "Agent", `{"description":"d","prompt":"p","subagent_type":"builder","run_in_background":false}`, Allow,
			`{"description":"d","isolation":"worktree","prompt":"p","run_in_background":false,"subagent_type":"builder"}`},
		{"unmarked role", "Agent", `{"description":"d","prompt":"p","subagent_type":"helper"}`, Pass, ""},
		{"no subagent_type", "Agent", `{"description":"d","prompt":"p"}`, Pass, ""},
		{"isolation respected", "Agent", `{"description":"d","prompt":"p","subagent_type":"builder","isolation":"remote"}`, Pass, ""},
		{"isolation null is absent (models do pass null)", "Agent", `{"description":"d","isolation":null,"prompt":"p","subagent_type":"builder"}`, Allow,
			`{"description":"d","isolation":"worktree","prompt":"p","subagent_type":"builder"}`},
		{"isolation empty string is absent", "Agent", `{"description":"d","isolation":"","prompt":"p","subagent_type":"builder"}`, Allow,
			`{"description":"d","isolation":"worktree","prompt":"p","subagent_type":"builder"}`},
		{"cwd null is absent and dropped", "Agent", `{"cwd":null,"description":"d","prompt":"p","subagent_type":"fixer"}`, Allow,
			`{"description":"d","isolation":"worktree","prompt":"p","subagent_type":"fixer"}`},
		{"isolation null, cwd chosen: cwd respected", "Agent", `{"cwd":"/x","isolation":null,"prompt":"p","subagent_type":"fixer"}`, Pass, ""},
		{"isolation false is a value the model chose", "Agent", `{"isolation":false,"prompt":"p","subagent_type":"fixer"}`, Pass, ""},
		{"cwd respected", "Agent", `{"description":"d","prompt":"p","subagent_type":"fixer","cwd":"/x"}`, Pass, ""},
		{"not Agent", "Bash", `{"subagent_type":"builder"}`, Pass, ""},
		{"input not an object", "Agent", `"builder"`, Pass, ""},
		{"input missing", "Agent", ``, Pass, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Isolate(Input{ToolName: tt.tool, ToolInput: json.RawMessage(tt.input)}, roles)
			if d.Verdict != tt.want {
				t.Fatalf("verdict %s, want %s", d.Verdict, tt.want)
			}
			if tt.wantInput != "" && string(d.UpdatedInput) != tt.wantInput {
				t.Errorf("updated input\n got %s\nwant %s", d.UpdatedInput, tt.wantInput)
			}
		})
	}
}

func TestDecisionOutput(t *testing.T) {
	tests := []struct {
		d     Decision
		event string
		want  string
	}{
		{Decision{Verdict: Pass}, "PreToolUse", `{}`},
		{Decision{Verdict: Deny, Reason: "R"}, "PreToolUse",
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"R"}}`},
		{Decision{Verdict: Allow, UpdatedInput: json.RawMessage(`{"a":1}`)}, "PreToolUse",
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"a":1}}}`},
		{Decision{Verdict: Rewrite, UpdatedToolOutput: json.RawMessage(`{"stdout":"x"}`)}, "PostToolUse",
			`{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":{"stdout":"x"}}}`},
	}
	for _, tt := range tests {
		got, err := json.Marshal(tt.d.Output(tt.event))
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: got %s (%v), want %s", tt.d.Verdict, got, err, tt.want)
		}
	}
}
