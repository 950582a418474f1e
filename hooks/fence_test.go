package hooks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fenceTree is a workspace with its workbench and run dir, a folder
// outside, and the symlinks an attacker would plant.
type fenceTree struct {
	root, ws, wb, runs, notes, outside, wt string
}

func newFenceTree(t *testing.T) fenceTree {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ft := fenceTree{root: root, ws: filepath.Join(root, "ws"), outside: filepath.Join(root, "outside")}
	ft.wb = filepath.Join(ft.ws, ".flower")
	ft.runs = filepath.Join(ft.wb, "runs")
	ft.notes = filepath.Join(ft.wb, "notes")
	ft.wt = filepath.Join(ft.ws, ".claude", "worktrees", "agent-1")
	for _, d := range []string{ft.runs, ft.notes, ft.outside, ft.wt, filepath.Join(ft.ws, "sub"), filepath.Join(root, "home")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(ft.notes, "目标.md"), filepath.Join(ft.ws, "a.txt")} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"out":       "../outside",                     // a folder link out
		"dangling":  filepath.Join(ft.outside, "new"), // a write creates the target
		"goal-link": filepath.Join(ft.notes, "目标.md"), // a second name for the goal
		"loop1":     "loop2",                          // a loop
		"loop2":     "loop1",                          //
		"inside":    "sub",                            // a harmless link
		"chain":     "out/../outside/deeper/file.txt", // a relative link through a link out
	} {
		if err := os.Symlink(target, filepath.Join(ft.ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	return ft
}

func (ft fenceTree) config(allow ...string) FenceConfig {
	return FenceConfig{
		Roots: append([]string{ft.ws, ft.wb}, allow...),
		Protected: []string{ft.runs, filepath.Join(ft.notes, "需求.md"), filepath.Join(ft.notes, "目标.md"),
			filepath.Join(ft.notes, "问答记录.md"), filepath.Join(ft.notes, "交接-*"), filepath.Join(ft.notes, "archive")},
	}
}

func writeInput(tool, field, path string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{field: path, "content": "forged"})
	return b
}

// TestFence decides table by table where a write may go: inside the
// workspace and the workbench, never onto flower's records, never out,
// whichever way the path is spelled (relative, .., absolute, through a
// symlink, a dangling symlink, a link before ..). Unclear input is denied.
func TestFence(t *testing.T) {
	ft := newFenceTree(t)
	t.Setenv("HOME", filepath.Join(ft.root, "home"))
	j := filepath.Join
	tests := []struct {
		name  string
		tool  string
		input json.RawMessage
		cwd   string
		agent string
		allow []string
		want  Verdict
		why   string // a fixed text the deny reason must hold
	}{
		{"absolute inside", "Write", writeInput("Write", "file_path", j(ft.ws, "new.txt")), ft.ws, "", nil, Pass, ""},
		{"relative inside", "Write", writeInput("Write", "file_path", "src/new.txt"), ft.ws, "", nil, Pass, ""},
		{"edit existing", "Edit", writeInput("Edit", "file_path", "a.txt"), ft.ws, "a1", nil, Pass, ""},
		{"through a harmless link", "Write", writeInput("Write", "file_path", "inside/x.txt"), ft.ws, "", nil, Pass, ""},
		{"dot-dot staying inside", "Write", writeInput("Write", "file_path", "sub/../b.txt"), ft.ws, "", nil, Pass, ""},
		{"own note", "Write", writeInput("Write", "file_path", j(ft.notes, "决定-1.md")), ft.ws, "a1", nil, Pass, ""},
		{"artifact", "Write", writeInput("Write", "file_path", ".flower/artifacts/r.md"), ft.ws, "a1", nil, Pass, ""},
		{"notebook inside", "NotebookEdit", writeInput("NotebookEdit", "notebook_path", "n.ipynb"), ft.ws, "", nil, Pass, ""},
		{"worktree relative", "Write", writeInput("Write", "file_path", "main.go"), ft.wt, "a1", nil, Pass, ""},
		{"worktree absolute", "Edit", writeInput("Edit", "file_path", j(ft.wt, "pkg", "x.go")), ft.wt, "a1", nil, Pass, ""},
		{"not a write tool", "Read", writeInput("Read", "file_path", "/etc/passwd"), ft.ws, "", nil, Pass, ""},

		{"dot-dot out", "Write", writeInput("Write", "file_path", "../outside/x"), ft.ws, "", nil, Deny, "--allow-dir"},
		{"dot-dot out from a subagent", "Write", writeInput("Write", "file_path", "../outside/x"), ft.ws, "a1", nil, Deny, fenceOutsideText},
		{"absolute out", "Write", writeInput("Write", "file_path", j(ft.outside, "x")), ft.ws, "", nil, Deny, fenceOutsideText},
		{"root of the disk", "Write", writeInput("Write", "file_path", "/"), ft.ws, "", nil, Deny, fenceOutsideText},
		{"the parent itself", "Write", writeInput("Write", "file_path", ".."), ft.ws, "", nil, Deny, fenceOutsideText},
		{"edit out", "Edit", writeInput("Edit", "file_path", "/etc/hosts"), ft.ws, "a1", nil, Deny, fenceOutsideText},
		{"notebook out", "NotebookEdit", writeInput("NotebookEdit", "notebook_path", j(ft.outside, "n.ipynb")), ft.ws, "", nil, Deny, fenceOutsideText},
		{"dir symlink out, new file", "Write", writeInput("Write", "file_path", "out/x.txt"), ft.ws, "", nil, Deny, strings.Split(fenceResolvesTo, "%s")[0]},
		{"dir symlink out, new folders", "Write", writeInput("Write", "file_path", "out/a/b/c.txt"), ft.ws, "", nil, Deny, fenceOutsideText},
		{"dangling symlink out", "Write", writeInput("Write", "file_path", "dangling"), ft.ws, "", nil, Deny, fenceOutsideText},
		{"relative link chain out", "Write", writeInput("Write", "file_path", "chain"), ft.ws, "", nil, Deny, fenceOutsideText},
		{"link before dot-dot", "Write", writeInput("Write", "file_path", ft.ws+"/out/../x.txt"), ft.ws, "", nil, Deny, fenceOutsideText},
		{"worktree dot-dot out", "Write", writeInput("Write", "file_path", "../../../../outside/x"), ft.wt, "a1", nil, Deny, fenceOutsideText},
		{"home", "Write", writeInput("Write", "file_path", "~/x"), ft.ws, "", nil, Deny, fenceOutsideText},
		{"proc", "Write", writeInput("Write", "file_path", "/proc/self/cwd/a.txt"), ft.ws, "", nil, Deny, fenceUnclearText},
		{"symlink loop", "Write", writeInput("Write", "file_path", "loop1"), ft.ws, "", nil, Deny, fenceUnclearText},

		{"goal by Write", "Write", writeInput("Write", "file_path", j(ft.notes, "目标.md")), ft.ws, "a1", nil, Deny, fenceProtectedText},
		{"goal by Edit, relative", "Edit", writeInput("Edit", "file_path", ".flower/notes/目标.md"), ft.ws, "a1", nil, Deny, fenceProtectedText},
		{"goal through dot-dot", "Write", writeInput("Write", "file_path", "sub/../.flower/notes/目标.md"), ft.ws, "", nil, Deny, fenceProtectedText},
		{"goal through a symlink", "Write", writeInput("Write", "file_path", "goal-link"), ft.ws, "a1", nil, Deny, fenceProtectedText},
		{"goal from the worktree", "Write", writeInput("Write", "file_path", "../../../.flower/notes/目标.md"), ft.wt, "a1", nil, Deny, fenceProtectedText},
		{"brief not there yet", "Write", writeInput("Write", "file_path", j(ft.notes, "需求.md")), ft.ws, "", nil, Deny, fenceProtectedText},
		{"Q&A log", "Edit", writeInput("Edit", "file_path", j(ft.notes, "问答记录.md")), ft.ws, "a1", nil, Deny, fenceProtectedText},
		{"handoff note", "Write", writeInput("Write", "file_path", j(ft.notes, "交接-执行.md")), ft.ws, "a1", nil, Deny, fenceProtectedText},
		{"archived handoff", "Write", writeInput("Write", "file_path", j(ft.notes, "archive", "交接", "x.md")), ft.ws, "a1", nil, Deny, fenceProtectedText},
		{"manifest", "Write", writeInput("Write", "file_path", ".flower/runs/manifest.json"), ft.ws, "a1", nil, Deny, fenceProtectedText},
		{"lineage", "Edit", writeInput("Edit", "file_path", j(ft.runs, "lineage.json")), ft.ws, "a1", nil, Deny, fenceProtectedText},
		{"goal even with allow-dir", "Write", writeInput("Write", "file_path", j(ft.notes, "目标.md")), ft.ws, "a1", []string{ft.root}, Deny, fenceProtectedText},

		{"allow-dir absolute", "Write", writeInput("Write", "file_path", j(ft.outside, "x")), ft.ws, "", []string{ft.outside}, Pass, ""},
		{"allow-dir through the link", "Write", writeInput("Write", "file_path", "out/x.txt"), ft.ws, "a1", []string{ft.outside}, Pass, ""},
		{"allow-dir is no wider than it says", "Write", writeInput("Write", "file_path", j(ft.root, "x")), ft.ws, "", []string{ft.outside}, Deny, fenceOutsideText},

		{"missing path", "Write", json.RawMessage(`{"content":"x"}`), ft.ws, "", nil, Deny, "no file_path"},
		{"notebook with file_path only", "NotebookEdit", writeInput("NotebookEdit", "file_path", "n.ipynb"), ft.ws, "", nil, Deny, "no notebook_path"},
		{"null path", "Edit", json.RawMessage(`{"file_path":null}`), ft.ws, "", nil, Deny, "no file_path"},
		{"number path", "Write", json.RawMessage(`{"file_path":7}`), ft.ws, "", nil, Deny, "not a string"},
		{"empty path", "Write", json.RawMessage(`{"file_path":""}`), ft.ws, "", nil, Deny, "empty"},
		{"NUL in path", "Write", json.RawMessage(`{"file_path":"a\u0000b"}`), ft.ws, "", nil, Deny, "empty or not a path"},
		{"input not an object", "Write", json.RawMessage(`["a.txt"]`), ft.ws, "", nil, Deny, "not an object"},
		{"no input", "Write", nil, ft.ws, "", nil, Deny, "not an object"},
		{"relative without cwd", "Write", writeInput("Write", "file_path", "a.txt"), "", "", nil, Deny, "no absolute cwd"},
		{"relative with relative cwd", "Write", writeInput("Write", "file_path", "a.txt"), "ws", "", nil, Deny, "no absolute cwd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Input{ToolName: tt.tool, ToolInput: tt.input, Cwd: tt.cwd, AgentID: tt.agent}
			d := Fence(in, ft.config(tt.allow...))
			if d.Verdict != tt.want {
				t.Fatalf("verdict %s, want %s (reason %q, detail %v)", d.Verdict, tt.want, d.Reason, d.Detail)
			}
			if tt.want == Deny && !strings.Contains(d.Reason, tt.why) {
				t.Errorf("reason lacks %q: %s", tt.why, d.Reason)
			}
		})
	}
}

// The workspace may be named through a symlink: the roots are resolved too.
func TestFenceResolvesTheRoots(t *testing.T) {
	ft := newFenceTree(t)
	alias := filepath.Join(ft.root, "alias")
	if err := os.Symlink(ft.ws, alias); err != nil {
		t.Fatal(err)
	}
	cfg := FenceConfig{Roots: []string{alias}, Protected: []string{filepath.Join(alias, ".flower", "notes", "目标.md")}}
	for path, want := range map[string]Verdict{
		filepath.Join(ft.ws, "x.txt"):                     Pass,
		filepath.Join(alias, "x.txt"):                     Pass,
		filepath.Join(ft.notes, "目标.md"):                  Deny,
		filepath.Join(ft.root, "outside", "x.txt"):        Deny,
		filepath.Join(ft.root, "not-yet", "deep", "x.md"): Deny,
	} {
		if d := Fence(Input{ToolName: "Write", ToolInput: writeInput("Write", "file_path", path), Cwd: ft.ws}, cfg); d.Verdict != want {
			t.Errorf("%s: %s, want %s (%s)", path, d.Verdict, want, d.Reason)
		}
	}
}

// flower-hook fence end to end through Run: flags, the deny answer on
// stdout (exit 0, the CLI reads the JSON), and bad flags failing closed.
func TestRunFence(t *testing.T) {
	ft := newFenceTree(t)
	in := func(p string) []byte {
		b, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": ft.ws,
			"tool_input": map[string]string{"file_path": p, "content": "x"}})
		return b
	}
	args := []string{"fence", "--root", ft.ws, "--root", ft.wb, "--protect", filepath.Join(ft.notes, "目标.md")}
	code, out, _ := runGuard(t, args, in("ok.txt"), nil)
	if code != ExitOK || strings.TrimSpace(out) != "{}" {
		t.Errorf("inside: exit %d, %s", code, out)
	}
	code, out, _ = runGuard(t, args, in(".flower/notes/目标.md"), nil)
	if code != ExitOK || !strings.Contains(out, `"permissionDecision":"deny"`) || !strings.Contains(out, fenceProtectedText) {
		t.Errorf("goal: exit %d, %s", code, out)
	}
	code, out, _ = runGuard(t, append(args, "--root", ft.outside), in("../outside/x"), nil)
	if code != ExitOK || strings.TrimSpace(out) != "{}" {
		t.Errorf("allowed outside: exit %d, %s", code, out)
	}
	for _, bad := range [][]string{{"fence"}, {"fence", "--root", ""}, {"fence", "--root", ft.ws, "extra"}} {
		if code, _, _ := runGuard(t, bad, in("ok.txt"), nil); code != ExitDeny {
			t.Errorf("%q: exit %d, want %d", bad, code, ExitDeny)
		}
	}
}

// fence --project (the plugin's): the project is $CLAUDE_PROJECT_DIR, else
// the call's cwd; $FLOWER_ALLOW_DIR widens it; the project's .flower state
// is protected; with neither a project nor a cwd everything is denied.
func TestRunFenceProject(t *testing.T) {
	ft := newFenceTree(t)
	in := func(p, cwd string) []byte {
		b, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Edit", "cwd": cwd,
			"tool_input": map[string]string{"file_path": p}})
		return b
	}
	project := env(map[string]string{"CLAUDE_PROJECT_DIR": ft.ws})
	allowed := env(map[string]string{"CLAUDE_PROJECT_DIR": ft.ws, "FLOWER_ALLOW_DIR": ft.outside + string(filepath.ListSeparator) + "relative"})
	for _, tc := range []struct {
		name   string
		path   string
		cwd    string
		getenv func(string) string
		deny   bool
	}{
		{"inside", "x.go", ft.ws, project, false},
		{"inside, project from the cwd", "x.go", ft.ws, nil, false},
		{"worktree", "x.go", ft.wt, project, false},
		{"outside", "../outside/x", ft.ws, project, true},
		{"outside, allowed", "../outside/x", ft.ws, allowed, false},
		{"goal", ".flower/notes/目标.md", ft.ws, allowed, true},
		{"brief", ".flower/notes/需求.md", ft.ws, project, true},
		{"Q&A log", ".flower/notes/问答记录.md", ft.ws, project, true},
		{"handoff", ".flower/notes/交接-执行.md", ft.ws, project, true},
		{"runs", ".flower/runs/manifest.json", ft.ws, project, true},
		{"flow lock", ".flower/flow.lock", ft.ws, project, true},
		{"index", ".flower/INDEX.md", ft.ws, project, true},
		{"spill", ".flower/spill/0123456789abcdef.txt", ft.ws, project, true},
		{"own note", ".flower/notes/决定.md", ft.ws, project, false},
		{"no project, no cwd", filepath.Join(ft.ws, "x.go"), "", nil, true},
	} {
		code, out, _ := runGuard(t, []string{"fence", "--project"}, in(tc.path, tc.cwd), tc.getenv)
		if denied := strings.Contains(out, `"deny"`); code != ExitOK || denied != tc.deny {
			t.Errorf("%s: exit %d, denied %v, want %v: %s", tc.name, code, denied, tc.deny, out)
		}
	}
}

// The most specific entry decides: a step's workbench inside the run dir
// (flower step --workbench) is writable while the rest of the run dir (the
// steps' settings.json, the manifest) is not, and the workbench's own
// records stay protected; a root no deeper than a protected folder does
// not open it.
func TestFenceMostSpecificWins(t *testing.T) {
	ft := newFenceTree(t)
	wb := filepath.Join(ft.runs, "workbench")
	cfg := FenceConfig{Roots: []string{ft.ws, wb}, Protected: append([]string{ft.runs}, WorkbenchRecords(wb)...)}
	for path, want := range map[string]Verdict{
		filepath.Join(wb, "artifacts", "r.md"):                     Pass,
		filepath.Join(wb, "notes", "决定.md"):                        Pass,
		filepath.Join(ft.runs, "manifest.json"):                    Deny,
		filepath.Join(ft.runs, "run-1", "worker", "settings.json"): Deny,
		filepath.Join(wb, "notes", "交接-worker.md"):                 Deny,
		filepath.Join(wb, "INDEX.md"):                              Deny,
		filepath.Join(wb, "spill", "x.txt"):                        Deny,
	} {
		if d := Fence(Input{ToolName: "Write", ToolInput: writeInput("Write", "file_path", path), Cwd: ft.ws}, cfg); d.Verdict != want {
			t.Errorf("%s: %s, want %s (%s)", path, d.Verdict, want, d.Reason)
		}
	}
	same := FenceConfig{Roots: []string{ft.ws, ft.runs}, Protected: []string{ft.runs}}
	if d := Fence(Input{ToolName: "Write", ToolInput: writeInput("Write", "file_path", filepath.Join(ft.runs, "lineage.json")), Cwd: ft.ws}, same); d.Verdict != Deny {
		t.Errorf("a root equal to a protected folder opened it: %s", d.Verdict)
	}
}

// Where names are case-insensitive (foldCase: macOS, Windows) another
// spelling of a protected name is the same file and is denied.
func TestFenceFoldsCase(t *testing.T) {
	ft := newFenceTree(t)
	in := Input{ToolName: "Write", ToolInput: writeInput("Write", "file_path", ".flower/Notes/目标.MD"), Cwd: ft.ws}
	old := foldCase
	defer func() { foldCase = old }()
	foldCase = false // control: on a case-sensitive disk it is another file
	if d := Fence(in, ft.config()); d.Verdict != Pass {
		t.Errorf("case-sensitive: %s (%s)", d.Verdict, d.Reason)
	}
	foldCase = true
	if d := Fence(in, ft.config()); d.Verdict != Deny || !strings.Contains(d.Reason, fenceProtectedText) {
		t.Errorf("case-insensitive: %s (%s)", d.Verdict, d.Reason)
	}
	in.ToolInput = writeInput("Write", "file_path", ".flower/notes/交接-X.MD")
	if d := Fence(in, ft.config()); d.Verdict != Deny {
		t.Errorf("case-insensitive handoff: %s", d.Verdict)
	}
}
