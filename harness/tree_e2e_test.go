package harness_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/internal/child"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// lateTool is the Bash call of the tree tests: it marks that it runs, then
// marks again 3 s later, unless it was killed in between.
func lateTool(ws string) *scripted.Block {
	cmd := "touch " + filepath.Join(ws, "STARTED") + "; sleep 8; touch " + filepath.Join(ws, "MARKER")
	in, _ := json.Marshal(map[string]string{"command": cmd, "description": "late marker"})
	return &scripted.Block{Name: "Bash", Input: in}
}

// treeScript has the Bash call made by the main thread, or by a worker
// subagent the coordinator delegates to.
func treeScript(where string) func(ws string) *scripted.Script {
	return func(ws string) *scripted.Script {
		// Each conversation calls once, then answers in text (a background
		// subagent's notification, too, gets text).
		once := func(call *scripted.Block, done string) scripted.Conversation {
			return scripted.Conversation{Replies: []scripted.Reply{{ToolUse: call}},
				Func: func(scripted.Request) scripted.Reply { return scripted.Reply{Text: done} }}
		}
		main, sub := once(lateTool(ws), "MAIN_DONE"), once(lateTool(ws), "SUB_DONE")
		main.Name, sub.Name, sub.Match = "main", "sub", scripted.Match{FirstUser: "SUB_TASK"}
		if where == "main" {
			return &scripted.Script{Conversations: []scripted.Conversation{main}}
		}
		main = once(&scripted.Block{Name: "Agent", Input: json.RawMessage(`{"description":"sub","prompt":"SUB_TASK run the late marker","subagent_type":"worker"}`)}, "MAIN_DONE")
		main.Name = "main"
		return &scripted.Script{Conversations: []scripted.Conversation{sub, main}}
	}
}

// TestFlowerStep_ToolTreeDiesWithFlower: kill -9 or SIGHUP of `flower step`
// while a Bash call runs (`touch STARTED; sleep 8; touch MARKER`, made by
// the main thread or by a subagent) leaves no process of the step alive and
// the late marker never appears; SIGHUP also records the step as ended in
// the manifest (no "running" row left). The control, not signalled, makes
// the marker: the tool does run, and late. The portable cases run the same
// with the supervisor in the macOS mode (child.ModeEnv=portable: no
// subreaper, no death signal, no /proc), which the kill -9 case checks in
// the supervisor's environment.
func TestFlowerStep_ToolTreeDiesWithFlower(t *testing.T) {
	t.Parallel()
	flower := testbed.BuildBinary(t, "./cmd/flower")
	hook := hookBinary(t)
	type treeCase struct{ where, how, mode string }
	var cases []treeCase
	for _, where := range []string{"main", "subagent"} {
		for _, how := range []string{"kill -9", "SIGHUP", "control"} {
			cases = append(cases, treeCase{where, how, ""})
		}
	}
	// The macOS path, on Linux: the supervisor in the portable mode.
	cases = append(cases, treeCase{"main", "kill -9", "portable"}, treeCase{"main", "control", "portable"})
	for _, c := range cases {
		where, how := c.where, c.how
		t.Run(strings.TrimSuffix(where+"/"+how+"/"+c.mode, "/"), func(t *testing.T) {
			t.Parallel()
			b := testbed.NewFor(t, treeScript(where))
			role := map[string]string{"main": "worker", "subagent": "coordinator"}[where]
			runDir := filepath.Join(filepath.Dir(b.Workspace), "runs")
			cmd := flowerStep(t, b, flower, hook, runDir, "--role", role, "--name", "tree", "run the late marker")
			if c.mode != "" {
				cmd.Env = append(cmd.Env, child.ModeEnv+"="+c.mode)
			}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			started, marker := filepath.Join(b.Workspace, "STARTED"), filepath.Join(b.Workspace, "MARKER")
			if how == "control" {
				if err := cmd.Wait(); err != nil {
					t.Fatalf("flower step: %v\n%s", err, out.String())
				}
				if _, err := os.Stat(marker); err != nil {
					t.Fatalf("control: the late marker is missing: %v\n%s", err, out.String())
				}
				return
			}
			if !testbed.Eventually(testbed.Left(t), func() bool { _, err := os.Stat(started); return err == nil }) {
				t.Fatalf("the Bash call never started\n%s", out.String())
			}
			step := child.Descendants(cmd.Process.Pid)
			if c.mode != "" {
				assertSupervisorMode(t, step, c.mode)
			}
			if os.Getenv("TREE_DEBUG") != "" {
				ps, _ := exec.Command("ps", "-eo", "pid,ppid,pgid,stat,args").CombinedOutput()
				t.Logf("step %v\n%s", step, ps)
			}
			sig := map[string]syscall.Signal{"kill -9": syscall.SIGKILL, "SIGHUP": syscall.SIGHUP}[how]
			// The tool marks 8 s after STARTED: a kill later than that proves
			// nothing (a loaded machine), so it must come well before.
			st, _ := os.Stat(started)
			if late := time.Since(st.ModTime()); late > 6*time.Second {
				t.Fatalf("the signal would come %v after STARTED, too late to prove anything", late)
			}
			// The tool's shell names the marker: the look that finds it now
			// is the one that must find nothing once flower is gone.
			if len(testbed.Mentioning(marker)) == 0 {
				t.Fatal("control: the tool's shell is not found by its command line")
			}
			syscall.Kill(cmd.Process.Pid, sig)
			cmd.Wait()
			if !testbed.Eventually(10*time.Second, func() bool { return len(livePIDs(step)) == 0 }) {
				t.Errorf("processes of the step outlived flower: %v (of %v)", livePIDs(step), step)
			}
			if os.Getenv("TREE_DEBUG") != "" {
				ps, _ := exec.Command("ps", "-eo", "pid,ppid,pgid,stat,args").CombinedOutput()
				for _, l := range strings.Split(string(ps), "\n") {
					if strings.Contains(l, "TestFlowerStep_ToolTree") || strings.Contains(l, "flower-hook") {
						t.Logf("after: %s", l)
					}
				}
			}
			// No shell that would touch the marker is left anywhere (it may
			// have been reparented out of the step's tree): awaited, not
			// slept past the tool's 8 s.
			if !testbed.Eventually(10*time.Second, func() bool { return len(testbed.Mentioning(marker)) == 0 }) {
				t.Fatalf("the tool's shell outlived %s of flower: %v", how, testbed.Mentioning(marker))
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatalf("the late marker appeared after %s of flower\n%s", how, out.String())
			}
			if how == "SIGHUP" {
				assertStepEnded(t, runDir, out.String())
			}
		})
	}
}

// livePIDs are the pids of pids that are still alive (not zombies).
func livePIDs(pids []int) []int {
	var out []int
	for _, p := range pids {
		if alive(p) {
			out = append(out, p)
		}
	}
	return out
}

// assertStepEnded fails t unless the manifest in runDir has the step
// "tree" as an ended, failed result and no running step.
func assertStepEnded(t *testing.T, runDir, out string) {
	t.Helper()
	rows, err := harness.ReadManifest(filepath.Join(runDir, "manifest.json"))
	if err != nil || len(rows) != 1 {
		t.Fatalf("manifest: %v %+v\n%s", err, rows, out)
	}
	r := rows[0]
	if len(r.Running) != 0 || len(r.Results) != 1 || r.Results[0].OK || r.Results[0].Step != "tree" {
		t.Fatalf("after SIGHUP the manifest row is %+v\n%s", r, out)
	}
	if e := r.Results[0].Error; !strings.Contains(e, "hangup") {
		t.Errorf("the step's error does not name the hangup: %q", e)
	}
}

// assertSupervisorMode fails t unless one of pids is a supervisor
// (flower-hook __supervise) whose environment sets child.ModeEnv to mode.
func assertSupervisorMode(t *testing.T, pids []int, mode string) {
	t.Helper()
	for _, p := range pids {
		argv, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "cmdline"))
		if !bytes.Contains(argv, []byte("\x00"+child.SuperviseArg+"\x00")) {
			continue
		}
		env, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "environ"))
		if slices.Contains(strings.Split(string(env), "\x00"), child.ModeEnv+"="+mode) {
			return
		}
		t.Fatalf("the supervisor (pid %d) runs without %s=%s", p, child.ModeEnv, mode)
	}
	t.Fatalf("no supervisor among the step's processes %v", pids)
}
