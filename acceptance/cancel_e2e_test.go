package acceptance

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/internal/demo"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/testkit/testbed"
)

// slowCoderScript is the demo's model with the coder's first call a Bash
// that marks it runs and then sleeps: the signal comes meanwhile.
func slowCoderScript(ws string) *scripted.Script {
	s := flowerbin.DemoScript(ws)
	for i := range s.Conversations {
		if c := &s.Conversations[i]; c.Name == "coder" {
			in, _ := json.Marshal(map[string]string{"command": "touch " + filepath.Join(ws, "CODER_RUNS") + "; sleep 30", "description": "work"})
			c.Replies = append([]scripted.Reply{{ToolUse: &scripted.Block{Name: "Bash", Input: in}}}, c.Replies...)
		}
	}
	return s
}

// TestE2E_SignalDuringCoderIsACancel: SIGTERM or SIGINT (off a terminal)
// while the coder subagent's Bash runs ends the flow as interrupted: exit
// 130, flow_result exit_code 130, one work round recorded (no extra
// "cancelled" rounds), no round 2 printed, and `flower runs` counts no
// failed step.
func TestE2E_SignalDuringCoderIsACancel(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			bed := testbed.NewFor(t, slowCoderScript)
			flower := testbed.BuildBinary(t, "./cmd/flower")
			answers := filepath.Join(t.TempDir(), "answers.txt")
			os.WriteFile(answers, []byte(demo.Answer+"\n"), 0o644)
			runDir := filepath.Join(t.TempDir(), "runs")
			flowerbin.MarkSelfTested(t, runDir, bed.Claude)
			env := flowerbin.Env(t, bed.Env(), bed.Claude)
			cmd := testbed.Command(t, flower, "--json", "--timeout", "0", "--answers", answers, "--run-dir", runDir, "-")
			cmd.Env, cmd.Dir = env, bed.Workspace
			cmd.Stdin = strings.NewReader(demo.Ask + "\n")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if !testbed.Eventually(testbed.Left(t), func() bool { _, err := os.Stat(filepath.Join(bed.Workspace, "CODER_RUNS")); return err == nil }) {
				t.Fatalf("the coder never ran\n%s", stderr.String())
			}
			cmd.Process.Signal(sig)
			cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != 130 {
				t.Errorf("exit %d, want 130\n%s", code, stderr.String())
			}
			lines := flowerbin.JSONLines(t, stdout.Bytes())
			if final := lines[len(lines)-1]; final.Get("kind").String() != "flow_result" || final.Get("exit_code").Int() != 130 {
				t.Errorf("last line: %s", final.Raw)
			}
			rows, err := harness.ReadManifest(filepath.Join(runDir, "manifest.json"))
			if err != nil || len(rows) != 1 {
				t.Fatalf("manifest: %v %d rows", err, len(rows))
			}
			work := 0
			for _, r := range rows[0].Results {
				if strings.HasPrefix(r.Step, flow.WorkStepName) {
					work++
					if !r.Cancelled() {
						t.Errorf("the work round is not a cancel: %+v", r)
					}
				}
			}
			if work != 1 {
				t.Errorf("%d work rounds recorded, want the one that was cancelled: %+v", work, rows[0].Results)
			}
			if strings.Contains(stdout.String()+stderr.String(), "2/3") {
				t.Errorf("a second round was printed")
			}
			runs := testbed.Command(t, flower, "runs", "--json", "--run-dir", runDir)
			runs.Env = env
			out, _ := runs.Output()
			if gjson.Get(string(out), "0.failed").Int() != 0 {
				t.Errorf("runs counts failed steps after a cancel: %s", out)
			}
		})
	}
}
