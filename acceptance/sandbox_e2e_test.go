package acceptance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/testkit/testbed"
)

// lookRO is the glance every read-only role takes in these tests: RO when
// the workspace cannot be written.
const lookRO = "test -w . && echo RW || echo RO"

// glanceFirst answers a conversation's first request with the lookRO
// glance and every later one with then.
func glanceFirst(then func(r scripted.Request) scripted.Reply) func(r scripted.Request) scripted.Reply {
	return func(r scripted.Request) scripted.Reply {
		if len(r.AllToolResults()) == 0 {
			return flowerbin.Tool("Bash", map[string]any{"command": lookRO, "description": "look"})
		}
		return then(r)
	}
}

// sandboxScript is a starter flow whose coordinator and judge each glance
// (lookRO) before they act, whose coder writes coded.txt, and whose oracle
// glances before it answers.
func sandboxScript(ws string) *scripted.Script {
	return &scripted.Script{Conversations: []scripted.Conversation{
		{Name: "coder", Match: scripted.Match{System: "你是执行者"}, Func: func(r scripted.Request) scripted.Reply {
			if len(r.AllToolResults()) == 0 {
				return flowerbin.Tool("Write", map[string]any{"file_path": filepath.Join(ws, "coded.txt"), "content": "coded\n"})
			}
			return scripted.Reply{Text: "写完了"}
		}},
		{Name: "clarify", Match: scripted.Match{System: "你是需求澄清者"}, Replies: []scripted.Reply{{Text: flowerbin.DemoBrief}}},
		{Name: "goal", Match: scripted.Match{System: "你是独立评审", FirstUser: "把它变成目标和检查清单"},
			Func: func(scripted.Request) scripted.Reply { return flowerbin.TypedGoal(flowerbin.DemoGoal) }},
		{Name: "judge", Match: scripted.Match{System: "你是独立评审", FirstUser: "请独立评审"},
			Func: glanceFirst(func(r scripted.Request) scripted.Reply {
				return flowerbin.TypedJudge(r.FirstUser(), flowerbin.DemoAchieved)
			})},
		{Name: "oracle", Match: scripted.Match{System: "你是旁路问答"},
			Func: glanceFirst(func(scripted.Request) scripted.Reply { return scripted.Reply{Text: "ORACLE: done"} })},
		{Name: "coordinator", Match: scripted.Match{System: "你是协调者"}, Func: glanceFirst(func(r scripted.Request) scripted.Reply {
			if strings.Contains(r.LastUser(), "写完了") || len(r.AllToolResults()) > 1 {
				return scripted.Reply{Text: "coder 汇报完了"}
			}
			return flowerbin.Tool("Agent", map[string]any{"description": "写文件", "subagent_type": "coder", "run_in_background": false,
				"prompt": "目标: 写 coded.txt。验收: 文件存在。"})
		})},
	}}
}

// glanceResult is the result of conversation name's lookRO glance, from
// its second request.
func glanceResult(t *testing.T, bed *testbed.Bed, name string) scripted.ToolResult {
	t.Helper()
	reqs := bed.Model.RequestsFor(name)
	if len(reqs) < 2 {
		t.Fatalf("%s made %d requests, want a glance and its answer", name, len(reqs))
	}
	trs := reqs[1].AllToolResults()
	if len(trs) == 0 {
		t.Fatalf("%s's second request carries no tool result", name)
	}
	return trs[0]
}

// TestE2E_SandboxedFlow (issue 32): under --sandbox=require the
// coordinator's, the judge's and the oracle's glance `test -w .` answer RO
// (the tool results in the recorded requests), while the coder subagent
// still writes its file and the flow ends achieved. Control: the coder's
// Write lands in the same workspace, so it is writable to a worker.
func TestE2E_SandboxedFlow(t *testing.T) {
	t.Parallel()
	testbed.RequireTool(t, "bwrap", "the read-only sandbox")
	bed := testbed.NewFor(t, sandboxScript)
	out, code := runFlower(t, bed, "--sandbox=require", "写 coded.txt")
	if code != 0 {
		t.Fatalf("flower exited %d:\n%s", code, out)
	}
	if data, err := os.ReadFile(filepath.Join(bed.Workspace, "coded.txt")); err != nil || string(data) != "coded\n" {
		t.Errorf("the coder's file: %q %v", data, err)
	}
	for _, role := range []string{"coordinator", "judge"} {
		if r := glanceResult(t, bed, role); r.IsError || strings.TrimSpace(r.Content) != "RO" {
			t.Errorf("the %s's glance answered %+v, want RO", role, r)
		}
	}
	flower := testbed.BuildBinary(t, "./cmd/flower")
	cmd := testbed.Command(t, flower, "ask", "--sandbox=require", "where are we?")
	cmd.Env, cmd.Dir = flowerbin.Env(t, bed.Env(), bed.Claude), bed.Workspace
	ask, _ := cmd.CombinedOutput()
	if !strings.Contains(string(ask), "ORACLE: done") {
		t.Fatalf("flower ask: %s", ask)
	}
	if r := glanceResult(t, bed, "oracle"); r.IsError || strings.TrimSpace(r.Content) != "RO" {
		t.Errorf("the oracle's glance answered %+v, want RO", r)
	}
}

// TestE2E_SandboxRequireRefuses: --sandbox=require (and
// FLOWER_SANDBOX=require) with no bwrap on PATH refuses to start, naming
// the install line, before anything is written (auto's one warning is
// TestApplySandbox's). Control: the same
// refusal does not happen with bwrap on PATH (TestE2E_SandboxedFlow runs
// under --sandbox=require).
func TestE2E_SandboxRequireRefuses(t *testing.T) {
	t.Parallel()
	bed := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "any", Replies: []scripted.Reply{{Text: "never asked"}}}}})
	flower := testbed.BuildBinary(t, "./cmd/flower")
	bin := t.TempDir()
	for _, tool := range []string{"bash", "git"} {
		p := testbed.RequireTool(t, tool, "the PATH without bwrap")
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"--sandbox=require"}, nil} {
		cmd := testbed.Command(t, flower, append(args, "--no-self-test", "--timeout", "0", "写 coded.txt")...)
		env := flowerbin.Env(t, bed.Env(), bed.Claude, "PATH="+bin)
		if args == nil {
			env = append(env, "FLOWER_SANDBOX=require")
		}
		cmd.Env, cmd.Dir = env, bed.Workspace
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code == 0 || !strings.Contains(string(out), "--sandbox=require") ||
			!strings.Contains(string(out), "apt-get install -y bubblewrap") {
			t.Errorf("%v: exit %d, want a refusal naming the install line:\n%s", args, code, out)
		}
		if _, err := os.Stat(filepath.Join(bed.Workspace, ".flower", "runs")); err == nil {
			t.Errorf("%v: the refused start wrote a run dir", args)
		}
	}
}

// TestE2E_StepSandboxedGlance: `flower step --role clarify
// --sandbox=require` runs the read-only role's Bash glance in the
// sandbox: the model sees `test -w .` answer RO. Control: the same step
// with --sandbox=off sees RW, so the workspace is writable and the answer
// can differ.
func TestE2E_StepSandboxedGlance(t *testing.T) {
	t.Parallel()
	testbed.RequireTool(t, "bwrap", "the read-only sandbox")
	bed := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "clarify",
		Func: glanceFirst(func(r scripted.Request) scripted.Reply {
			return scripted.Reply{Text: "GLANCED " + strings.TrimSpace(r.AllToolResults()[0].Content)}
		})}}})
	flower := testbed.BuildBinary(t, "./cmd/flower")
	for mode, want := range map[string]string{"require": "GLANCED RO", "off": "GLANCED RW"} {
		cmd := testbed.Command(t, flower, "step", "--role", "clarify", "--sandbox="+mode, "look first")
		cmd.Env, cmd.Dir = flowerbin.Env(t, bed.Env(), bed.Claude), bed.Workspace
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("--sandbox=%s: %v, want %q in:\n%s", mode, err, want, out)
		}
	}
}
