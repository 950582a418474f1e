package acceptance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowerhq/flower/hooks"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/testkit/testbed"
)

// writtenGoal is what a coder would like the judge to check against.
const writtenGoal = "## 目标\n随便\n## 检查清单\n- [x] 无"

// writesScript is a starter flow whose coder subagent makes the Writes in
// order (one per turn) and then reports; the judge accepts.
func writesScript(writes func(ws string) []map[string]any) func(ws string) *scripted.Script {
	return func(ws string) *scripted.Script {
		w := writes(ws)
		return &scripted.Script{Conversations: []scripted.Conversation{
			{Name: "coder", Match: scripted.Match{System: "你是执行者"}, Func: func(r scripted.Request) scripted.Reply {
				if n := len(r.AllToolResults()); n < len(w) {
					return flowerbin.Tool("Write", w[n])
				}
				return scripted.Reply{Text: "写完了"}
			}},
			{Name: "clarify", Match: scripted.Match{System: "你是需求澄清者"}, Replies: []scripted.Reply{{Text: flowerbin.DemoBrief}}},
			{Name: "goal", Match: scripted.Match{System: "你是独立评审", FirstUser: "把它变成目标和检查清单"},
				Func: func(scripted.Request) scripted.Reply { return flowerbin.TypedGoal(flowerbin.DemoGoal) }},
			{Name: "judge", Match: scripted.Match{System: "你是独立评审", FirstUser: "请独立评审"},
				Func: func(r scripted.Request) scripted.Reply {
					return flowerbin.TypedJudge(r.FirstUser(), flowerbin.DemoAchieved)
				}},
			{Name: "coordinator", Match: scripted.Match{System: "你是协调者"}, Func: func(r scripted.Request) scripted.Reply {
				if strings.Contains(r.LastUser(), "[tool_result]") {
					return scripted.Reply{Text: "coder 汇报完了"}
				}
				return flowerbin.Tool("Agent", map[string]any{"description": "写文件", "subagent_type": "coder", "run_in_background": false,
					"prompt": "目标: 按要求写文件。验收: 文件存在。"})
			}},
		}}
	}
}

// coderResults are the tool results the coder's last request carried, in order.
func coderResults(t *testing.T, bed *testbed.Bed) []scripted.ToolResult {
	t.Helper()
	reqs := bed.Model.RequestsFor("coder")
	if len(reqs) == 0 {
		t.Fatal("the coder never ran")
	}
	return reqs[len(reqs)-1].AllToolResults()
}

// fencedAndAllowed runs check twice in parallel: fenced, and with
// --allow-dir (allow).
func fencedAndAllowed(t *testing.T, check func(t *testing.T, allow bool)) {
	for _, allow := range []bool{false, true} {
		name := "fenced"
		if allow {
			name = "allow-dir"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			check(t, allow)
		})
	}
}

// runFlower runs flower with args in the bed's workspace to its end.
func runFlower(t *testing.T, bed *testbed.Bed, args ...string) (string, int) {
	t.Helper()
	flower := testbed.BuildBinary(t, "./cmd/flower")
	cmd := testbed.Command(t, flower, append([]string{"--json", "--no-self-test", "--timeout", "0"}, args...)...)
	cmd.Env = flowerbin.Env(t, bed.Env(), bed.Claude)
	cmd.Dir = bed.Workspace
	out, _ := cmd.CombinedOutput()
	return string(out), cmd.ProcessState.ExitCode()
}

// TestE2E_FenceKeepsTheGoal (issue 21 Done-when c, e): in the starter
// flow a coder subagent that rewrites 目标.md by Write is denied — the goal
// on disk is the judge's, and the deny reason is in the coder's next
// request — and so is its Write to ../outside; with --allow-dir that Write
// lands. Control: the same coder's Write to a note of its own (and, in the
// second case, to ../outside) lands on disk, so the Writes do run and a
// failing fence would show.
func TestE2E_FenceKeepsTheGoal(t *testing.T) {
	t.Parallel()
	fencedAndAllowed(t, func(t *testing.T, allow bool) {
		var outside string
		bed := testbed.NewFor(t, writesScript(func(ws string) []map[string]any {
			outside = filepath.Join(filepath.Dir(ws), "outside")
			notes := filepath.Join(ws, ".flower", "notes")
			return []map[string]any{
				{"file_path": filepath.Join(notes, "目标.md"), "content": writtenGoal},
				{"file_path": ws + "/../outside/x.txt", "content": "out"},
				{"file_path": filepath.Join(notes, "决定-1.md"), "content": "mine"},
			}
		}))
		if err := os.MkdirAll(outside, 0o700); err != nil {
			t.Fatal(err)
		}
		args := []string{"write the files"}
		if allow {
			args = append([]string{"--allow-dir", outside}, args...)
		}
		out, code := runFlower(t, bed, args...)
		if code != 0 {
			t.Fatalf("flower exit %d:\n%s", code, flowerbin.Tail([]byte(out)))
		}
		notes := filepath.Join(bed.Workspace, ".flower", "notes")
		goal, _ := os.ReadFile(filepath.Join(notes, "目标.md"))
		if strings.Contains(string(goal), "随便") || !strings.Contains(string(goal), "hello.txt 和 numbers.txt") {
			t.Errorf("the goal on disk is not the judge's:\n%s", goal)
		}
		res := coderResults(t, bed)
		if len(res) != 3 {
			t.Fatalf("coder saw %d tool results, want 3: %+v", len(res), res)
		}
		goalPath := filepath.Join(notes, "目标.md")
		if !res[0].IsError || !strings.Contains(res[0].Content, hooks.FenceProtectedReason(goalPath, nil)) {
			t.Errorf("the forged goal's Write was not denied with the fence's reason: %+v", res[0])
		}
		if _, err := os.Stat(filepath.Join(notes, "决定-1.md")); err != nil || res[2].IsError {
			t.Errorf("control: the coder's own note did not land (%v): %+v", err, res[2])
		}
		_, err := os.Stat(filepath.Join(outside, "x.txt"))
		if allow {
			if err != nil || res[1].IsError {
				t.Errorf("with --allow-dir the Write to ../outside did not land (%v): %+v", err, res[1])
			}
			return
		}
		if err == nil || !res[1].IsError || !strings.Contains(res[1].Content, "--allow-dir") {
			t.Errorf("the Write to ../outside was not denied (landed: %v): %+v", err == nil, res[1])
		}
	})
}

// TestE2E_FenceStopsAMainThreadWrite (Done-when e): `flower step --role
// worker`, whose main thread has Write, is denied a Write to ../outside;
// with --allow-dir the same Write lands (the control).
func TestE2E_FenceStopsAMainThreadWrite(t *testing.T) {
	t.Parallel()
	fencedAndAllowed(t, func(t *testing.T, allow bool) {
		bed := testbed.NewFor(t, func(ws string) *scripted.Script {
			return &scripted.Script{Conversations: []scripted.Conversation{{Name: "main", Func: func(r scripted.Request) scripted.Reply {
				if len(r.AllToolResults()) == 0 {
					return flowerbin.Tool("Write", map[string]any{"file_path": ws + "/../outside/x.txt", "content": "out"})
				}
				return scripted.Reply{Text: "step done"}
			}}}}
		})
		outside := filepath.Join(filepath.Dir(bed.Workspace), "outside")
		if err := os.MkdirAll(outside, 0o700); err != nil {
			t.Fatal(err)
		}
		flower := testbed.BuildBinary(t, "./cmd/flower")
		args := []string{"step", "--role", "worker", "--json"}
		if allow {
			args = append(args, "--allow-dir", outside)
		}
		cmd := testbed.Command(t, flower, append(args, "write it")...)
		cmd.Env = flowerbin.Env(t, bed.Env(), bed.Claude)
		cmd.Dir = bed.Workspace
		out, stderr := flowerbin.Output(t, cmd, "flower step")
		if !strings.Contains(flowerbin.LastLine(out), "step done") {
			t.Fatalf("step did not finish: %s\n%s", flowerbin.LastLine(out), stderr)
		}
		reqs := bed.Model.RequestsFor("main")
		res := reqs[len(reqs)-1].AllToolResults()
		_, err := os.Stat(filepath.Join(outside, "x.txt"))
		if len(res) != 1 {
			t.Fatalf("tool results %+v", res)
		}
		if allow {
			if err != nil || res[0].IsError {
				t.Errorf("control: with --allow-dir the Write did not land (%v): %+v", err, res[0])
			}
			return
		}
		// (the CLI cleans the path it hands to the hook)
		target := filepath.Join(outside, "x.txt")
		resolved, _ := filepath.EvalSymlinks(outside)
		if err == nil || !res[0].IsError || !strings.Contains(res[0].Content, hooks.FenceOutsideReason(target, filepath.Join(resolved, "x.txt"), nil)) {
			t.Errorf("the main thread's Write to ../outside was not denied (landed: %v): %+v", err == nil, res[0])
		}
	})
}

// TestE2E_FenceLetsTheIsolatedCoderWrite: with --isolate the coder works
// in its own git worktree (<ws>/.claude/worktrees/…) and the workbench lies
// outside the workspace (<ws>/../.flower-ws); the fence lets its Writes to
// both through, and still denies the goal in that workbench (the control
// that the fence was there).
func TestE2E_FenceLetsTheIsolatedCoderWrite(t *testing.T) {
	t.Parallel()
	bed := testbed.NewFor(t, func(ws string) *scripted.Script {
		sc := writesScript(func(string) []map[string]any { return nil })(ws)
		wb := filepath.Join(filepath.Dir(ws), ".flower-"+filepath.Base(ws))
		sc.Conversations[0].Func = func(r scripted.Request) scripted.Reply {
			res := r.AllToolResults()
			if len(res) == 0 {
				return flowerbin.Tool("Bash", map[string]any{"command": "pwd", "description": "where am I"})
			}
			wt := strings.TrimSpace(res[0].Content)
			goal := filepath.Join(wb, "notes", "目标.md")
			calls := []scripted.Reply{
				flowerbin.Tool("Write", map[string]any{"file_path": filepath.Join(wt, "made-in-worktree.txt"), "content": "wt"}),
				flowerbin.Tool("Write", map[string]any{"file_path": filepath.Join(wb, "artifacts", "numbers.txt"), "content": "1\n2\n"}),
				flowerbin.Tool("Read", map[string]any{"file_path": goal}), // the CLI wants an existing file read first
				flowerbin.Tool("Write", map[string]any{"file_path": goal, "content": writtenGoal}),
			}
			if n := len(res) - 1; n < len(calls) {
				return calls[n]
			}
			return scripted.Reply{Text: "写完了"}
		}
		return sc
	})
	testbed.GitInit(t, bed.Workspace)
	if out, code := runFlower(t, bed, "--isolate", "write in the worktree"); code != 0 {
		t.Fatalf("flower exit %d:\n%s", code, flowerbin.Tail([]byte(out)))
	}
	res := coderResults(t, bed)
	if len(res) != 5 || !strings.Contains(res[0].Content, "/.claude/worktrees/") {
		t.Fatalf("the coder did not work in a worktree: %+v", res)
	}
	for i, what := range []string{"its worktree", "the outside workbench"} {
		if r := res[i+1]; r.IsError {
			t.Errorf("the coder's Write into %s was denied: %+v", what, r)
		}
	}
	goal := filepath.Join(filepath.Dir(bed.Workspace), ".flower-"+filepath.Base(bed.Workspace), "notes", "目标.md")
	if r := res[4]; !r.IsError || !strings.Contains(r.Content, hooks.FenceProtectedReason(goal, nil)) {
		t.Errorf("control: the goal in the outside workbench was not fenced: %+v", r)
	}
}
