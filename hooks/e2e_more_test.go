package hooks_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/flowerhq/flower/hooks"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

func TestE2E_SpillKeepsPointerReadBackWholeReadInOwnShape(t *testing.T) {
	t.Parallel()
	hook := testbed.BuildBinary(t, "./cmd/flower-hook")
	big := bigText(400) + "x" // exactly 20,000 characters
	if len(big) != 20000 {
		t.Fatalf("big is %d chars", len(big))
	}
	var mu sync.Mutex
	var ws string // set once the bed exists; the model reads it when answering
	step := 0
	next := func(r scripted.Request) scripted.Reply {
		mu.Lock()
		defer mu.Unlock()
		step++
		switch step {
		case 1: // after the spilled Bash: read the spill file back
			p := spillPath.FindString(r.Text())
			if p == "" {
				return scripted.Reply{Text: "no spill path"}
			}
			return tool("Read", map[string]any{"file_path": p})
		case 2:
			return tool("Read", map[string]any{"file_path": filepath.Join(ws, "big.txt")})
		case 3:
			return tool("Grep", map[string]any{"pattern": "line", "output_mode": "content", "path": ws})
		}
		return scripted.Reply{Text: "spill done"}
	}
	bed := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main",
		Match:   scripted.Match{FirstUser: "spill test"},
		Replies: []scripted.Reply{bashCall("cat big.txt", "show")},
		Func:    next}}})
	mu.Lock()
	ws = bed.Workspace
	mu.Unlock()
	srv := bed.Model
	putFile(t, bed.Workspace, "big.txt", []byte(big))
	wb := filepath.Join(bed.Workspace, ".flower")
	settings := writeSettings(t, bed.Home, hookEntry{"PostToolUse", hooks.BulkyTools, hook + " spill --dir " + wb})
	run := runClaude(t, bed, nil, "spill test", "--settings", settings, "--allowedTools", "Bash Read Grep")
	if run.Result.Get("result").String() != "spill done" {
		t.Fatalf("exit %d result %s stderr %s", run.ExitCode, run.Result.Raw, run.Stderr)
	}
	reqs := srv.RequestsFor("main")
	if len(reqs) != 5 {
		t.Fatalf("main requests = %d", len(reqs))
	}
	// 1. Bash: pointer + first 400 chars; the full text on disk.
	bash := lastResult(t, reqs[1])
	want := filepath.Join(wb, "spill", sha16(big)+".txt")
	pointer, rest, _ := strings.Cut(bash.Content, "\n")
	if !strings.HasPrefix(pointer, "[spilled: 20000 chars, full text in "+want) || rest != strings.TrimRight(big[:hooks.SpillPreviewChars], "\n") {
		// (the CLI trims trailing whitespace off a tool result; the 400th char is a newline)
		t.Errorf("Bash result is not pointer + 400 chars (%d chars): %q", len(bash.Content), bash.Content)
	}
	if b, err := os.ReadFile(want); err != nil || string(b) != big {
		t.Errorf("spill file %s: %d bytes, err %v", want, len(b), err)
	}
	// 2. Reading the spill file back is not spilled again.
	back := lastResult(t, reqs[2])
	if back.IsError || strings.Contains(back.Content, "[spilled:") || !strings.Contains(back.Content, "line 00399") {
		t.Errorf("read-back of the spill file is not whole (%d chars): %.200q", len(back.Content), back.Content)
	}
	// 3. A big Read is spilled in Read's own shape.
	read := lastResult(t, reqs[3])
	if !strings.Contains(read.Content, "[spilled: ") || strings.Contains(read.Content, "line 00399") {
		t.Errorf("Read of big.txt not spilled: %.300q", read.Content)
	}
	shaped := false
	for _, l := range run.OfType("user") {
		if c := l.Get("tool_use_result.file.content").String(); l.Get("tool_use_result.type").String() == "text" && strings.HasPrefix(c, "[spilled: ") {
			shaped = true
		}
	}
	if !shaped {
		t.Errorf("no Read tool_use_result of shape {type:text, file:{content:[spilled…]}} in the stream")
	}
	// 4. Grep's content mode too.
	if g := lastResult(t, reqs[4]); !strings.Contains(g.Content, "[spilled: ") {
		t.Errorf("Grep content not spilled: %.300q", g.Content)
	}
}

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

func TestE2E_PluginDeniesMainThreadBash(t *testing.T) {
	t.Parallel()
	hook := testbed.BuildBinary(t, "./cmd/flower-hook")
	bed := mainBed(t, "plugin test", bashCall("echo plugin > plugin-out.txt", "write"), bashCall("cat big.txt | head -n 300", "glance"), scripted.Reply{Text: "plugin done"})
	putFile(t, bed.Workspace, "big.txt", []byte(bigText(400)))
	// The plugin as committed, with the binary where the set-up script puts it.
	bin, err := os.ReadFile(hook)
	if err != nil {
		t.Fatal(err)
	}
	plug := pluginWith(t, bin)
	run := runClaude(t, bed, nil, "plugin test", "--plugin-dir", plug, "--allowedTools", "Bash")
	if run.Result.Get("result").String() != "plugin done" {
		t.Fatalf("exit %d result %s stderr %s", run.ExitCode, run.Result.Raw, run.Stderr)
	}
	if init := run.OfType("system", "init"); len(init) == 0 || !strings.Contains(init[0].Get("plugins").Raw, `"flower"`) {
		t.Errorf("plugin not listed in system/init")
	}
	if r := lastResult(t, bed.Model.RequestsFor("main")[1]); !r.IsError || !strings.Contains(r.Content, "Agent tool") {
		t.Errorf("plugin did not deny the main-thread Bash: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(bed.Workspace, "plugin-out.txt")); err == nil {
		t.Errorf("the denied command ran")
	}
	// The glance passes (--glance) and its 14,999-char output (300 lines, final newline trimmed) is spilled
	// into the project's .flower/spill/.
	glance := lastResult(t, bed.Model.RequestsFor("main")[2])
	files, _ := filepath.Glob(filepath.Join(bed.Workspace, ".flower", "spill", "*.txt"))
	if glance.IsError || !strings.HasPrefix(glance.Content, "[spilled: 14999 chars") || len(files) != 1 {
		t.Errorf("plugin glance/spill: files %v, result %.200q", files, glance.Content)
	}
}

func copyTo(t *testing.T, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
}

func TestE2E_IndexRefreshedOnWorkbenchWrite(t *testing.T) {
	t.Parallel()
	hook := testbed.BuildBinary(t, "./cmd/flower-hook")
	bed := mainBed(t, "index test",
		tool("Write", map[string]any{"file_path": "WS/.flower/artifacts/report.md", "content": "# report\n"}),
		tool("Write", map[string]any{"file_path": "WS/.flower/scripts/check.sh", "content": "#!/bin/sh\n# desc: checks the build\necho ok\n"}),
		scripted.Reply{Text: "index done"})
	wb := filepath.Join(bed.Workspace, ".flower")
	settings := writeSettings(t, bed.Home, hookEntry{"PostToolUse", hooks.IndexTools, hook + " index --dir " + wb})
	run := runClaude(t, bed, nil, "index test", "--settings", settings, "--permission-mode", "acceptEdits")
	if run.Result.Get("result").String() != "index done" {
		t.Fatalf("exit %d result %s", run.ExitCode, run.Result.Raw)
	}
	idx, err := os.ReadFile(filepath.Join(wb, hooks.IndexFile))
	if err != nil || !bytes.Contains(idx, []byte("artifacts/report.md")) || !bytes.Contains(idx, []byte("scripts/check.sh — checks the build")) {
		t.Errorf("INDEX.md not refreshed: %v\n%s", err, idx)
	}
}

// Fail closed: input the guard cannot understand → delegate and whitelist
// deny with exit 2 and a reason on stderr; spill leaves the output alone.
func TestE2E_FailClosedOnBadInput(t *testing.T) {
	t.Parallel()
	hook := testbed.BuildBinary(t, "./cmd/flower-hook")
	garbage := bytes.Repeat([]byte("\x00garbage{\"tool_name\":"), 10<<20/21)
	inputs := map[string][]byte{
		"empty": nil, "truncated": []byte(`{"tool_name":"Bash","tool_input":{"command":"ls"`),
		"array": []byte(`["tool_name","Bash"]`), "string": []byte(`"Bash"`), "null": []byte(`null`),
		"10MB garbage": garbage,
	}
	dir := t.TempDir()
	for name, in := range inputs {
		for _, g := range [][]string{{"delegate"}, {"whitelist", "--allow", "Read"}, {"spill", "--dir", dir}} {
			cmd := testbed.Command(t, hook, g...)
			cmd.Stdin = bytes.NewReader(in)
			out, errb, code := testbed.Exec(t, cmd)
			if strings.Contains(errb, "panic") {
				t.Errorf("%s %s panicked: %s", g[0], name, errb)
			}
			if g[0] == "spill" {
				if code != 0 || strings.TrimSpace(out) != "{}" {
					t.Errorf("spill on %s: exit %d out %q, want 0 {}", name, code, out)
				}
				continue
			}
			if code != hooks.ExitDeny || !strings.Contains(errb, "denied") {
				t.Errorf("%s on %s: exit %d stderr %q, want exit 2 with a reason", g[0], name, code, errb)
			}
		}
	}
}
