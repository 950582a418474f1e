package acceptance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/testkit/testbed"
)

// TestRoleMarkersAreFlowsTexts: each role the scripted model tells apart is
// told by a text flow really sends that role (its rules, and for the judge's
// two tasks their prompts), and by no other role's: the two packages cannot
// drift apart unnoticed.
func TestRoleMarkersAreFlowsTexts(t *testing.T) {
	sends := map[string][2]string{ // role → system rules, first user message
		scripted.RoleClarify:     {flow.ClarifyRules, "诉求: x"},
		scripted.RoleGoal:        {flow.JudgeRules, flow.GoalPrompt},
		scripted.RoleCoordinator: {flow.CoordinatorRules, "x"},
		scripted.RoleCoder:       {flow.WorkerRules, "x"},
		scripted.RoleJudge:       {flow.JudgeRules, flow.VerifyPrompt},
		scripted.RoleOracle:      {flow.OracleRules, "问题: x"},
	}
	for role, got := range sends {
		system, first := scripted.RoleMarker(role)
		if system == "" || !strings.Contains(got[0], system) || !strings.Contains(got[1], first) {
			t.Errorf("%s: marker %q / %q is not in what flow sends", role, system, first)
		}
		for other, o := range sends {
			if other != role && strings.Contains(o[0], system) && strings.Contains(o[1], first) {
				t.Errorf("%s's marker also fits %s", role, other)
			}
		}
	}
}

// TestE2E_ExampleStarterFlow: examples/starter-flow.yaml, the commented
// starter script, runs `flower "…"` to achieved on the real claude: the
// coder's command wrote hello.txt, every request had a scripted answer, and
// the coordinator's hand_back reply answered the subagent's hand-back.
func TestE2E_ExampleStarterFlow(t *testing.T) {
	t.Parallel()
	s, err := scripted.Load(filepath.Join(testbed.RepoRoot(t), "examples", "starter-flow.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	bed := testbed.New(t, s)
	flower := testbed.BuildBinary(t, "./cmd/flower")
	runDir := filepath.Join(t.TempDir(), "runs")
	flowerbin.MarkSelfTested(t, runDir, bed.Claude)
	cmd := testbed.Command(t, flower, "--json", "--timeout", "0", "--run-dir", runDir, "-C", bed.Workspace, "write hello.txt")
	cmd.Env = flowerbin.Env(t, bed.Env(), bed.Claude)
	out, _ := flowerbin.Output(t, cmd, "flower with the example script")
	lines := flowerbin.JSONLines(t, out)
	last := lines[len(lines)-1]
	if last.Get("kind").String() != "flow_result" || !last.Get("ok").Bool() || last.Get("verdict").String() != "achieved" {
		t.Fatalf("flow_result: %s", last.Raw)
	}
	if b, err := os.ReadFile(filepath.Join(bed.Workspace, "hello.txt")); err != nil || string(b) != "hello\n" {
		t.Errorf("hello.txt = %q, %v", b, err)
	}
	if u := bed.Model.Unmatched(); len(u) != 0 {
		t.Errorf("%d unanswered requests, the first: %s", len(u), u[0].Error)
	}
	// claude starts the Agent in the background: the launch is answered by
	// the server (reply -1), the <task-notification> by the hand_back reply.
	handedBack, launched := false, false
	for _, r := range bed.Model.RequestsFor("coordinator") {
		handedBack = handedBack || r.HandBack() && r.Reply == 1
		launched = launched || r.AgentLaunched() && r.Reply == -1
	}
	if !handedBack || !launched || len(bed.Model.RequestsFor("coder")) == 0 || gjson.Get(last.Raw, "steps.#").Int() < 4 {
		t.Errorf("launch answered %v, hand-back answered %v, %d coder requests, steps %s", launched, handedBack, len(bed.Model.RequestsFor("coder")), last.Get("steps.#.step"))
	}
}
