package acceptance

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/testkit/testbed"
)

// heldScript: the coordinator polls its inbox until the file release
// exists (flowerbin.PollingScript), which holds the flow as long as the test wants.
func heldScript(release string) func(string) *scripted.Script {
	return func(string) *scripted.Script {
		return flowerbin.PollingScript(func(r scripted.Request) string {
			if _, err := os.Stat(release); err == nil || len(r.AllToolResults()) > 1200 {
				return "做完了"
			}
			return ""
		})
	}
}

// TestE2E_OneFlowPerWorkspace (issue 21 Done-when d): while a flow runs,
// a second `flower "…"` in the same workspace exits 1 at once, naming the
// running run and its pid and suggesting flower tell, and changes nothing
// (the brief has none of its words). Control: once the first has ended,
// the same second command starts and wakes the work (its words land in the
// brief), so the refusal was the lock's; and a flow killed with SIGKILL
// leaves no stuck lock.
func TestE2E_OneFlowPerWorkspace(t *testing.T) {
	t.Parallel()
	release := filepath.Join(t.TempDir(), "release")
	bed := testbed.NewFor(t, heldScript(release))
	flower := testbed.BuildBinary(t, "./cmd/flower")
	env := flowerbin.Env(t, bed.Env(), bed.Claude)
	first := testbed.Command(t, flower, "--json", "--no-self-test", "--timeout", "0", "--no-goal", "写个 hello.txt")
	first.Env, first.Dir = env, bed.Workspace
	var stdout, stderr bytes.Buffer
	first.Stdout, first.Stderr = &stdout, &stderr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	if !testbed.Eventually(testbed.Left(t), func() bool { return len(bed.Model.RequestsFor("coordinator")) >= 1 }) {
		t.Fatalf("the first flow's coordinator never started\nstderr: %s\nstdout: %s", stderr.String(), flowerbin.Tail(stdout.Bytes()))
	}
	const second = "SECOND-WORDS 也要支持乘法"
	again := func() (string, int) {
		cmd := testbed.Command(t, flower, "--json", "--no-self-test", "--timeout", "0", "--no-goal", second)
		cmd.Env, cmd.Dir = env, bed.Workspace
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	out, code := again()
	brief := filepath.Join(bed.Workspace, ".flower", "notes", "需求.md")
	b, _ := os.ReadFile(brief)
	lockText, _ := os.ReadFile(filepath.Join(bed.Workspace, ".flower", "flow.lock"))
	run := strings.Fields(string(lockText))
	if len(run) != 2 || run[0] != strconv.Itoa(first.Process.Pid) {
		t.Fatalf("the lock file names %q, the first flow is pid %d", lockText, first.Process.Pid)
	}
	if code != 1 || !strings.Contains(out, "run "+run[1]) || !strings.Contains(out, "pid "+run[0]) || !strings.Contains(out, "flower tell") {
		t.Errorf("second flow while the first runs: exit %d\n%s", code, out)
	}
	if strings.Contains(string(b), "SECOND-WORDS") {
		t.Errorf("the refused flow still amended the brief:\n%s", b)
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("first flow: %v\nstderr: %s\nstdout: %s", err, stderr.String(), flowerbin.Tail(stdout.Bytes()))
	}
	if final := gjson.Get(flowerbin.LastLine(stdout.Bytes()), "run").String(); final != run[1] {
		t.Errorf("the lock named run %s, the first flow was %s", run[1], final)
	}

	out, code = again()
	if code != 0 {
		t.Fatalf("control: after the first flow ended, the second did not run: exit %d\n%s", code, flowerbin.Tail([]byte(out)))
	}
	if b, _ := os.ReadFile(brief); !strings.Contains(string(b), "SECOND-WORDS") {
		t.Errorf("control: the wake's words are not in the brief:\n%s", b)
	}

	// A killed flow leaves no stuck lock: the kernel drops the flock.
	if err := os.Remove(release); err != nil {
		t.Fatal(err)
	}
	polls := len(bed.Model.RequestsFor("coordinator"))
	killed := testbed.Command(t, flower, "--json", "--no-self-test", "--timeout", "0", "--no-goal", "third words")
	killed.Env, killed.Dir = env, bed.Workspace
	if err := killed.Start(); err != nil {
		t.Fatal(err)
	}
	if !testbed.Eventually(testbed.Left(t), func() bool { return len(bed.Model.RequestsFor("coordinator")) > polls }) {
		t.Fatal("the third flow's coordinator never started")
	}
	if out, code := again(); code != 1 || !strings.Contains(out, "pid "+strconv.Itoa(killed.Process.Pid)) {
		t.Fatalf("while the third flow runs: exit %d\n%s", code, out)
	}
	killed.Process.Kill()
	killed.Wait()
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := again(); code != 0 {
		t.Errorf("after a flow was killed (SIGKILL), the next did not start: exit %d\n%s", code, flowerbin.Tail([]byte(out)))
	}
}
