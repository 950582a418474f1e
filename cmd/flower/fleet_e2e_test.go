package main

import "context"
import "encoding/json"
import "fmt"
import "os"
import "os/exec"
import "path/filepath"
import "regexp"
import "strings"
import "sync"
import "syscall"
import "testing"
import "time"

import "github.com/flowerhq/flower/internal/pgtest"
import "github.com/flowerhq/flower/internal/testbed"
import "github.com/flowerhq/flower/scripted"

// flowMarker finds the FLOW-n marker a fleet test's ask carries.
var flowMarker = regexp.MustCompile(`FLOW-[0-9]+`)

// fleetScript is a starter flow per ask: the clarifier's brief and the
// goal carry the ask's FLOW-n marker; the coordinator delegates once to the
// coder and then reports; the judge accepts. slow(req) gives a coder
// request its delay, so a test can kill a worker in the middle of a flow.
func fleetScript(slow func(scripted.Request) int) *scripted.Script {
	marker := func(r scripted.Request) string { return flowMarker.FindString(r.Text()) }
	return &scripted.Script{Conversations: []scripted.Conversation{
		{Name: "clarify", Match: scripted.Match{System: "你是需求澄清者"}, Func: func(r scripted.Request) scripted.Reply {
			m := marker(r)
			return scripted.Reply{Text: "## 目标\n" + m + ": 写 ok.txt\n## 验收标准\n" + m + " 的 ok.txt 存在\n## 边界\n只动工作区\n## 未知与假设\n无"}
		}},
		{Name: "goal", Match: scripted.Match{System: "你是独立评审", FirstUser: "把它变成目标和检查清单"}, Func: func(r scripted.Request) scripted.Reply {
			return scripted.Reply{Text: "## 目标\n" + marker(r) + " 完成\n## 检查清单\n- ok.txt 存在"}
		}},
		{Name: "judge", Match: scripted.Match{System: "你是独立评审", FirstUser: "请独立评审"}, Func: func(scripted.Request) scripted.Reply {
			return scripted.Reply{Text: demoAchieved}
		}},
		{Name: "coder", Match: scripted.Match{System: "你是执行者"}, Func: func(r scripted.Request) scripted.Reply {
			return scripted.Reply{Text: "coded", DelayMS: slow(r)}
		}},
		{Name: "coordinator", Match: scripted.Match{System: "你是协调者"}, Func: func(r scripted.Request) scripted.Reply {
			if strings.Contains(r.Messages().Raw, `"tool_result"`) {
				return scripted.Reply{Text: "做完了: " + marker(r)}
			}
			return scripted.Reply{ToolUse: &scripted.Block{Name: "Agent", Input: []byte(`{"description":"write ok","prompt":"write ok.txt","subagent_type":"coder","run_in_background":false}`)}}
		}},
	}}
}

// fleetBed is a scripted model, a PostgreSQL database, the flower binary
// and a git repository the queued flows clone.
type fleetBed struct {
	t      *testing.T
	bed    *testbed.Bed
	store  string
	bin    string
	hook   string
	repo   string
}

func newFleetBed(t *testing.T, slow func(scripted.Request) int) *fleetBed {
	t.Helper()
	store := pgtest.URL(t)
	bed := testbed.NewFor(t, func(string) *scripted.Script { return fleetScript(slow) })
	fb := &fleetBed{t: t, bed: bed, store: store, bin: testbed.BuildBinary(t, "./cmd/flower"),
		hook: testbed.BuildBinary(t, "./cmd/flower-hook"), repo: filepath.Join(t.TempDir(), "repo")}
	os.MkdirAll(fb.repo, 0o700)
	os.WriteFile(filepath.Join(fb.repo, "README"), []byte("a repo\n"), 0o600)
	for _, args := range [][]string{{"init", "-q"}, {"add", "README"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = fb.repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return fb
}

// machine is one "machine" of a fleet test: its own HOME, run dir and
// workspace root.
type fleetMachine struct {
	name, home, runDir, root string
}

func (fb *fleetBed) machine(name string) *fleetMachine {
	d := fb.t.TempDir()
	return &fleetMachine{name: name, home: filepath.Join(d, "home"), runDir: filepath.Join(d, "runs"), root: filepath.Join(d, "ws")}
}

func (fb *fleetBed) env(m *fleetMachine) []string {
	os.MkdirAll(m.home, 0o700)
	return append(testbed.BaseEnv(m.home, fb.bed.Model.URL()), "TMPDIR="+fb.bed.Tmp, "FLOWER_CLAUDE="+fb.bed.Claude, "FLOWER_HOOK="+fb.hook, "FLOWER_STORE="+fb.store)
}

// flower runs one flower command on m to its end.
func (fb *fleetBed) flower(m *fleetMachine, args ...string) (string, string, int) {
	fb.t.Helper()
	cmd := testbed.Command(fb.t, fb.bin, args...)
	cmd.Env, cmd.Dir = fb.env(m), fb.t.TempDir()
	return testbed.Exec(fb.t, cmd)
}

// worker starts `flower worker` on m.
func (fb *fleetBed) worker(m *fleetMachine, args ...string) *exec.Cmd {
	fb.t.Helper()
	cmd := testbed.Command(fb.t, fb.bin, append([]string{"worker", "--no-self-test", "--id", m.name, "--root", m.root, "--run-dir", m.runDir}, args...)...)
	cmd.Env, cmd.Dir = fb.env(m), fb.t.TempDir()
	logf, err := os.Create(filepath.Join(fb.t.TempDir(), m.name+".log"))
	if err != nil {
		fb.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		fb.t.Fatal(err)
	}
	fb.t.Cleanup(func() {
		logf.Close()
		if fb.t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			fb.t.Logf("worker %s:\n%s", m.name, tailOf(b))
		}
	})
	return cmd
}

// stopWorker sends SIGTERM and waits for the worker to end.
func stopWorker(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("worker %s after SIGTERM: %v", cmd.Args, err)
		}
	case <-time.After(time.Minute):
		t.Errorf("worker did not stop within a minute of SIGTERM")
	}
}

// qjob is a job as `flower queue ls --json` prints it.
type qjob struct {
	Kind      string `json:"kind"`
	ID        int64  `json:"id"`
	State     string `json:"state"`
	Attempt   int    `json:"attempt"`
	Worker    string `json:"worker"`
	Run       string `json:"run"`
	Workspace string `json:"workspace"`
	Verdict   string `json:"verdict"`
	Ask       string `json:"ask"`
	Attempts  []struct {
		Attempt   int    `json:"attempt"`
		Worker    string `json:"worker"`
		Workspace string `json:"workspace"`
		StartedAt string `json:"started_at"`
		EndedAt   string `json:"ended_at"`
	} `json:"attempts"`
}

func (fb *fleetBed) ls(m *fleetMachine) []qjob {
	fb.t.Helper()
	out, errOut, code := fb.flower(m, "queue", "ls", "--json")
	if code != 0 {
		fb.t.Fatalf("queue ls: exit %d: %s", code, errOut)
	}
	var jobs []qjob
	if err := json.Unmarshal([]byte(out), &jobs); err != nil {
		fb.t.Fatalf("queue ls --json: %v\n%s", err, out)
	}
	return jobs
}

func (fb *fleetBed) add(m *fleetMachine, args ...string) int64 {
	fb.t.Helper()
	out, errOut, code := fb.flower(m, append([]string{"queue", "add"}, args...)...)
	var id int64
	if _, err := fmt.Sscan(out, &id); code != 0 || err != nil {
		fb.t.Fatalf("queue add %v: exit %d: %q %s", args, code, out, errOut)
	}
	return id
}

// finished reports whether every job is completed, cancelled or discarded.
func finished(jobs []qjob) bool {
	for _, j := range jobs {
		if j.State != "completed" && j.State != "cancelled" && j.State != "discarded" {
			return false
		}
	}
	return len(jobs) > 0
}

// TestE2E_QueueOneFlow: one queued flow on one worker ends completed with
// the verdict achieved, its run and workspace recorded.
func TestE2E_QueueOneFlow(t *testing.T) {
	t.Parallel()
	fb := newFleetBed(t, func(scripted.Request) int { return 0 })
	m := fb.machine("m1")
	id := fb.add(m, "--repo", fb.repo, "FLOW-1 写 ok.txt")
	w := fb.worker(m, "--rescue-after", "3s")
	var jobs []qjob
	testbed.Await(t, 2*time.Minute, "the flow's end", func() bool { jobs = fb.ls(m); return finished(jobs) })
	stopWorker(t, w)
	j := jobs[0]
	if j.ID != id || j.State != "completed" || j.Verdict != "achieved" || j.Attempt != 1 || j.Worker != "m1" || j.Run == "" ||
		j.Workspace != filepath.Join(m.root, fmt.Sprintf("job-%d", id)) {
		t.Fatalf("job: %+v", j)
	}
	var mu sync.Mutex
	_ = &mu
	_ = context.Background
}
