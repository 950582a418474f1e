package hooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowerhq/flower/hooks"
	"github.com/flowerhq/flower/internal/linesock"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// hookEntry is one matcher group of a settings.json "hooks" section.
type hookEntry struct {
	Event, Matcher, Command string
}

// writeSettings writes a settings.json registering the given hooks.
func writeSettings(t *testing.T, dir string, entries ...hookEntry) string {
	t.Helper()
	h := map[string][]any{}
	for _, e := range entries {
		h[e.Event] = append(h[e.Event], map[string]any{"matcher": e.Matcher,
			"hooks": []any{map[string]any{"type": "command", "command": e.Command, "timeout": 30}}})
	}
	data, err := json.Marshal(map[string]any{"hooks": h})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// sock is a live FLOWER_SOCKET that collects report lines and, like the
// harness's, answers flower-hook-lite's hook calls (hooks.Answer).
type sock struct {
	path string
	mu   sync.Mutex
	got  []hooks.Report
	// answers is how long each hooks.Answer took (the server's share of a
	// flower-hook-lite call).
	answers []time.Duration
}

func listen(t testing.TB) *sock {
	t.Helper()
	s := &sock{path: linesock.FreshPath("fh-")}
	srv, err := linesock.ListenAt(s.path, 0, func(_ context.Context, line []byte) []byte {
		if hooks.IsCall(line) {
			start := time.Now()
			reply := hooks.Answer(line, func(r []byte) { s.add(r) })
			s.mu.Lock()
			s.answers = append(s.answers, time.Since(start))
			s.mu.Unlock()
			return reply
		}
		if !s.add(line) {
			return []byte(`{"ok":false}`)
		}
		return []byte(`{"ok":true}`)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return s
}

// add records a report line; false when it is none.
func (s *sock) add(line []byte) bool {
	var r hooks.Report
	if json.Unmarshal(line, &r) != nil {
		return false
	}
	s.mu.Lock()
	s.got = append(s.got, r)
	s.mu.Unlock()
	return true
}

// count is how many reports arrived so far.
func (s *sock) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.got)
}

// reports returns the reports that arrived once at least n have (or after
// ten seconds): the hooks have exited, but the listener may not have read
// their last lines yet.
func (s *sock) reports(n int) []hooks.Report {
	testbed.Eventually(10*time.Second, func() bool { return s.count() >= n })
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]hooks.Report(nil), s.got...)
}

// runClaude runs claude -p in the bed with extra environment.
func runClaude(t *testing.T, bed *testbed.Bed, env []string, prompt string, args ...string) *testbed.Run {
	t.Helper()
	full := append([]string{"-p", "--output-format", "stream-json", "--verbose"}, args...)
	cmd := bed.Command(testbed.Context(t), append(full, "--", prompt)...)
	cmd.Env = append(cmd.Env, env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	run := &testbed.Run{Stdout: out.String(), Stderr: errb.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		run.ExitCode = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("claude: %v", err)
	}
	run.Lines, run.Result = testbed.ParseStream([]byte(run.Stdout))
	return run
}

func tool(name string, input any) scripted.Reply {
	b, _ := json.Marshal(input)
	return scripted.Reply{ToolUse: &scripted.Block{Name: name, Input: b}}
}

// bashCall is a scripted Bash tool call.
func bashCall(command, description string) scripted.Reply {
	return tool("Bash", map[string]any{"command": command, "description": description})
}

// mainBed is a bed whose one conversation, "main", answers the prompt first
// with replies; "WS/" in their tool inputs is the workspace (fixPaths).
func mainBed(t *testing.T, first string, replies ...scripted.Reply) *testbed.Bed {
	t.Helper()
	return scriptBed(t, &scripted.Script{Conversations: []scripted.Conversation{
		{Name: "main", Match: scripted.Match{FirstUser: first}, Replies: replies}}})
}

// delegationBed is a bed where "main", asked first, makes the call mine, then
// sends the worker subagent with "SUBTASK: "+task, which makes the call
// theirs; each then answers "main done" and "sub done". "WS/" in the calls is
// the workspace (fixPaths).
func delegationBed(t *testing.T, first, task string, mine, theirs scripted.Reply) *testbed.Bed {
	t.Helper()
	send := tool("Agent", map[string]any{"description": task, "prompt": "SUBTASK: " + task, "subagent_type": "worker", "run_in_background": false})
	return scriptBed(t, &scripted.Script{Conversations: []scripted.Conversation{
		{Name: "sub", Match: scripted.Match{FirstUser: "SUBTASK: " + task}, Replies: []scripted.Reply{theirs, {Text: "sub done"}}},
		{Name: "main", Match: scripted.Match{FirstUser: first}, Replies: []scripted.Reply{mine, send, {Text: "main done"}}},
	}})
}

// scriptBed is a bed for sc with "WS/" in its tool inputs made the workspace.
func scriptBed(t *testing.T, sc *scripted.Script) *testbed.Bed {
	t.Helper()
	bed := testbed.New(t, sc)
	fixPaths(sc, bed.Workspace)
	return bed
}

// putFile writes a fixture file into dir.
func putFile(t *testing.T, dir, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func lastResult(t *testing.T, r scripted.Request) scripted.ToolResult {
	t.Helper()
	trs := r.ToolResults()
	if len(trs) != 1 {
		t.Fatalf("request %d carries %d tool results, want 1", r.Seq, len(trs))
	}
	return trs[0]
}

func TestE2E_DelegateDeniesMainThreadSubagentRuns(t *testing.T) {
	t.Parallel()
	hook := testbed.BuildBinary(t, "./cmd/flower-hook")
	sk := delegation(t, hook+" delegate")
	var deny, pass int
	for _, r := range sk.reports(2) {
		if r.Guard != hooks.GuardDelegate || r.V != 1 || r.Kind != "guard" || r.SessionID == "" {
			t.Errorf("bad report %+v", r)
		}
		switch {
		case r.Decision == hooks.Deny && r.Tool == "Bash" && r.AgentID == "":
			deny++
		case r.Decision == hooks.Pass && r.Tool == "Bash" && r.AgentID != "":
			pass++
		}
	}
	if deny != 1 || pass != 1 {
		t.Errorf("socket reports: %d main denies, %d subagent passes; want 1 and 1: %+v", deny, pass, sk.reports(2))
	}
}

func TestE2E_DelegateGlanceLetsReadOnlyBashThrough(t *testing.T) {
	t.Parallel()
	hook := testbed.BuildBinary(t, "./cmd/flower-hook")
	bed := mainBed(t, "glance", bashCall("ls -la | grep -c glance-marker", "look"), bashCall("echo written > out.txt", "write"), scripted.Reply{Text: "glanced"})
	putFile(t, bed.Workspace, "glance-marker", nil)
	settings := writeSettings(t, bed.Home, hookEntry{"PreToolUse", hooks.DefaultDelegateTools, hook + " delegate --glance"})
	run := runClaude(t, bed, nil, "glance", "--settings", settings, "--allowedTools", "Bash")
	if run.Result.Get("result").String() != "glanced" {
		t.Fatalf("exit %d result %s", run.ExitCode, run.Result.Raw)
	}
	main := bed.Model.RequestsFor("main")
	if r := lastResult(t, main[1]); r.IsError || strings.TrimSpace(r.Content) != "1" {
		t.Errorf("read-only glance did not run: %+v", r)
	}
	if r := lastResult(t, main[2]); !r.IsError || !strings.Contains(r.Content, hooks.DelegateReason("Bash")) {
		t.Errorf("writing Bash was not denied: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(bed.Workspace, "out.txt")); err == nil {
		t.Errorf("the denied command ran: out.txt exists")
	}
}

func TestE2E_WhitelistDeniesMainWriteSubagentWrites(t *testing.T) {
	t.Parallel()
	hook := testbed.BuildBinary(t, "./cmd/flower-hook")
	bed := delegationBed(t, "write please", "write", tool("Write", map[string]any{"file_path": "WS/main.txt", "content": "from main"}),
		tool("Write", map[string]any{"file_path": "WS/sub.txt", "content": "from sub"}))
	settings := writeSettings(t, bed.Home, hookEntry{"PreToolUse", hooks.HandsOnTools, hook + " whitelist --allow Read,Glob,Grep --role judge"})
	agents := `{"worker":{"description":"does work","prompt":"You are WORKER","tools":["Write","Read"]}}`
	run := runClaude(t, bed, nil, "write please", "--settings", settings, "--agents", agents, "--permission-mode", "acceptEdits")
	if run.Result.Get("result").String() != "main done" {
		t.Fatalf("exit %d result %s", run.ExitCode, run.Result.Raw)
	}
	main := bed.Model.RequestsFor("main")
	if r := lastResult(t, main[1]); !r.IsError || !strings.Contains(r.Content, hooks.WhitelistReason("judge", "Write")) {
		t.Errorf("main-thread Write was not denied by the whitelist: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(bed.Workspace, "main.txt")); err == nil {
		t.Errorf("main.txt was written")
	}
	if b, err := os.ReadFile(filepath.Join(bed.Workspace, "sub.txt")); err != nil || string(b) != "from sub" {
		t.Errorf("subagent's Write did not land: %q %v", b, err)
	}
}

// fixPaths replaces "WS/" in every scripted tool input by the workspace
// (the server reads the script as it answers, so patching after New works).
func fixPaths(sc *scripted.Script, ws string) {
	for ci := range sc.Conversations {
		for ri := range sc.Conversations[ci].Replies {
			if tu := sc.Conversations[ci].Replies[ri].ToolUse; tu != nil {
				tu.Input = json.RawMessage(strings.ReplaceAll(string(tu.Input), "WS/", ws+"/"))
			}
		}
	}
}

// bigText is n lines of 50 characters (49 + newline): over any threshold,
// under Read's per-line cap; no trailing newline.
func bigText(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "line %05d %s\n", i, strings.Repeat("x", 38))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

var spillPath = regexp.MustCompile(`/\S+/spill/[0-9a-f]{16}\.txt`)

func TestE2E_IsolatePutsMarkedRoleIntoWorktree(t *testing.T) {
	t.Parallel()
	hook := testbed.BuildBinary(t, "./cmd/flower-hook")
	agent := func(role, prompt string) scripted.Reply {
		return tool("Agent", map[string]any{"description": "where am I", "prompt": prompt, "subagent_type": role, "run_in_background": false})
	}
	pwd := tool("Bash", map[string]any{"command": "pwd", "description": "where"})
	bed := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{
		{Name: "iso", Match: scripted.Match{FirstUser: "ISOLATED TASK"}, Replies: []scripted.Reply{pwd, {Text: "iso done"}}},
		{Name: "plain", Match: scripted.Match{FirstUser: "PLAIN TASK"}, Replies: []scripted.Reply{pwd, {Text: "plain done"}}},
		{Name: "main", Match: scripted.Match{FirstUser: "isolate test"}, Replies: []scripted.Reply{
			agent("builder", "ISOLATED TASK"), agent("helper", "PLAIN TASK"), {Text: "isolate done"}}},
	}})
	testbed.GitInit(t, bed.Workspace)
	settings := writeSettings(t, bed.Home, hookEntry{"PreToolUse", hooks.IsolateTools, hook + " isolate --roles builder"})
	agents := `{"builder":{"description":"builds","prompt":"You are BUILDER","tools":["Bash"]},
	  "helper":{"description":"helps","prompt":"You are HELPER","tools":["Bash"]}}`
	run := runClaude(t, bed, nil, "isolate test", "--settings", settings, "--agents", agents)
	if run.Result.Get("result").String() != "isolate done" {
		t.Fatalf("exit %d result %s stderr %s", run.ExitCode, run.Result.Raw, run.Stderr)
	}
	iso, plain := bed.Model.RequestsFor("iso"), bed.Model.RequestsFor("plain")
	if len(iso) != 2 || len(plain) != 2 {
		t.Fatalf("iso %d plain %d requests", len(iso), len(plain))
	}
	if r := lastResult(t, iso[1]); !strings.Contains(r.Content, "/.claude/worktrees/") {
		t.Errorf("marked role did not run in a worktree: pwd = %q", r.Content)
	}
	if r := lastResult(t, plain[1]); strings.Contains(r.Content, "worktrees") || !strings.HasSuffix(strings.TrimSpace(r.Content), "/ws") {
		t.Errorf("unmarked role was isolated: pwd = %q", r.Content)
	}
}

// delegation runs a main thread whose Bash must be denied and a worker
// subagent whose Bash must run, with command as the PreToolUse hook of
// the delegated tools and env added to claude's environment; it checks
// what the model saw (the denial with the guidance, the subagent's output)
// and returns the report socket.
func delegation(t *testing.T, command string, env ...string) *sock {
	t.Helper()
	bed := delegationBed(t, "delegate please", "echo", bashCall("echo main-bash-ran", "echo"), bashCall("echo sub-bash-ran", "echo"))
	sk := listen(t)
	settings := writeSettings(t, bed.Home, hookEntry{"PreToolUse", hooks.DefaultDelegateTools, command})
	agents := `{"worker":{"description":"does work","prompt":"You are WORKER","tools":["Bash"]}}`
	run := runClaude(t, bed, append([]string{"FLOWER_SOCKET=" + sk.path}, env...), "delegate please", "--settings", settings, "--agents", agents)
	if run.Result.Get("result").String() != "main done" {
		t.Fatalf("exit %d result %s stderr %s", run.ExitCode, run.Result.Raw, run.Stderr)
	}
	main := bed.Model.RequestsFor("main")
	if len(main) != 3 {
		t.Fatalf("main requests = %d", len(main))
	}
	if denied := lastResult(t, main[1]); !denied.IsError || strings.Contains(denied.Content, "main-bash-ran") ||
		!strings.Contains(denied.Content, hooks.DelegateReason("Bash")) {
		t.Errorf("main-thread Bash was not denied with the guidance: %+v", denied)
	}
	sub := bed.Model.RequestsFor("sub")
	if len(sub) != 2 {
		t.Fatalf("sub requests = %d", len(sub))
	}
	if r := lastResult(t, sub[1]); r.IsError || !strings.Contains(r.Content, "sub-bash-ran") {
		t.Errorf("subagent Bash did not run: %+v", r)
	}
	return sk
}
