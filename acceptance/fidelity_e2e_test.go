package acceptance

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowerhq/flower/internal/demo"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/testkit/testbed"
)

// unverifiableCheck is a check the goal-setting judge cannot verify here.
const unverifiableCheck = "- 在 macOS 上也能打开 hello.txt [此环境无法验证:这里没有 macOS]"

// recordScript is a quick three-step flow: a clarifier that answers with the
// brief at once, a goal with one unverifiable check, a coordinator that
// reports at once (echoing its prompt's ask, so a later request shows whose
// conversation it carries), a judge that accepts, and an oracle for `flower
// ask`.
func recordScript(string) *scripted.Script {
	return &scripted.Script{Conversations: []scripted.Conversation{
		{Name: "oracle", Match: scripted.Match{System: "你是旁路问答"}, Replies: []scripted.Reply{{Text: "ORACLE: three steps ran"}}},
		{Name: "clarify", Match: scripted.Match{System: "你是需求澄清者"}, Func: func(scripted.Request) scripted.Reply {
			return scripted.Reply{Text: flowerbin.DemoBrief}
		}},
		{Name: "goal", Match: scripted.Match{System: "你是独立评审", FirstUser: "把它变成目标和检查清单"}, Func: func(scripted.Request) scripted.Reply {
			return flowerbin.TypedGoal(flowerbin.DemoGoal + "\n" + unverifiableCheck)
		}},
		{Name: "judge", Match: scripted.Match{System: "你是独立评审", FirstUser: "请独立评审"}, Func: func(r scripted.Request) scripted.Reply {
			return flowerbin.TypedJudge(r.FirstUser(), flowerbin.DemoAchieved)
		}},
		{Name: "coordinator", Match: scripted.Match{System: "你是协调者"}, Func: func(scripted.Request) scripted.Reply {
			return scripted.Reply{Text: "两个文件都写好了。"}
		}},
	}}
}

// starterRun runs `flower --json --timeout 0 --answers … --run-dir R -C ws ask`
// against bed's model and returns the last JSON line.
func starterRun(t *testing.T, bed *testbed.Bed, runDir, ask string) string {
	t.Helper()
	flower := testbed.BuildBinary(t, "./cmd/flower")
	answers := filepath.Join(t.TempDir(), "answers.txt")
	os.WriteFile(answers, []byte(demo.Answer+"\n"), 0o600)
	flowerbin.MarkSelfTested(t, runDir, bed.Claude)
	cmd := testbed.Command(t, flower, "--json", "--timeout", "0", "--answers", answers, "--run-dir", runDir, "-C", bed.Workspace, ask)
	cmd.Env = flowerbin.Env(t, bed.Env(), bed.Claude)
	cmd.Dir = t.TempDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("flower in %s: %v\n%s\n%s", bed.Workspace, err, stderr.String(), flowerbin.Tail(out))
	}
	lines := flowerbin.JSONLines(t, out)
	return lines[len(lines)-1].Raw
}

// TestE2E_FlowRecordAndWorkspaces: the workflow's step and task events land
// in the run's events.jsonl, where `flower runs show` and `flower ask` find
// them (issue 13 item 5); a second workspace sharing the run dir runs its
// own sessions — it succeeds and none of its requests carries the first
// workspace's conversation (item 6).
func TestE2E_FlowRecordAndWorkspaces(t *testing.T) {
	t.Parallel()
	runDir := filepath.Join(t.TempDir(), "shared-runs")
	bed1 := testbed.NewFor(t, recordScript)
	const ask1, ask2 = "ASK-ONE 写个 hello.txt", "ASK-TWO 写个 hello.txt"
	if last := starterRun(t, bed1, runDir, ask1); !strings.Contains(last, `"ok":true`) {
		t.Fatalf("first flow: %s", last)
	}

	flower := testbed.BuildBinary(t, "./cmd/flower")
	run := func(args ...string) string {
		t.Helper()
		cmd := testbed.Command(t, flower, args...)
		cmd.Env = flowerbin.Env(t, bed1.Env(), bed1.Claude, "FLOWER_RUN_DIR="+runDir)
		cmd.Dir = bed1.Workspace
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("flower %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	show := run("runs", "show")
	for _, want := range []string{"flow       step 1/3 确认需求", "flow       step 2/3 设定目标", "flow       step 3/3 执行",
		"flow       task 设定目标: 1 of 3 checks cannot be verified"} {
		if !strings.Contains(show, want) {
			t.Errorf("runs show lacks %q:\n%s", want, show)
		}
	}
	if js := run("runs", "show", "--json"); !strings.Contains(js, `"kind":"task"`) || !strings.Contains(js, "这里没有 macOS") {
		t.Errorf("runs show --json lacks the task event: %.2000s", js)
	}
	if out := run("ask", "where are we?"); !strings.Contains(out, "ORACLE") {
		t.Fatalf("ask: %s", out)
	}
	oracle := bed1.Model.RequestsFor("oracle")
	if len(oracle) != 1 {
		t.Fatalf("oracle requests = %d", len(oracle))
	}
	for _, want := range []string{"step 3/3 执行", "task 设定目标: 1 of 3 checks cannot be verified"} {
		if !strings.Contains(oracle[0].Text(), want) {
			t.Errorf("the oracle was not shown %q", want)
		}
	}

	// A second workspace, the same explicit run dir.
	bed2 := testbed.NewFor(t, recordScript)
	if last := starterRun(t, bed2, runDir, ask2); !strings.Contains(last, `"ok":true`) || !strings.Contains(last, `"verdict":"achieved"`) {
		t.Fatalf("second flow: %s", last)
	}
	reqs := bed2.Model.Requests()
	if len(reqs) == 0 {
		t.Fatal("the second flow sent no requests")
	}
	for _, r := range reqs {
		if strings.Contains(r.Text(), "ASK-ONE") {
			t.Fatalf("a request of the second workspace carries the first one's conversation:\n%.1500s", r.Text())
		}
	}
	if cl := bed2.Model.RequestsFor("clarify"); len(cl) == 0 || !strings.Contains(cl[0].Text(), "ASK-TWO") {
		t.Errorf("the second workspace's clarifier did not start from its own ask")
	}
	// Control: the first workspace's requests do carry ASK-ONE, so the
	// search above can find it.
	found := false
	for _, r := range bed1.Model.Requests() {
		found = found || strings.Contains(r.Text(), "ASK-ONE")
	}
	if !found {
		t.Error("control: ASK-ONE not found in the first workspace's requests")
	}
}
