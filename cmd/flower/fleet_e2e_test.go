package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/flowerhq/flower/fleet"
	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/testkit/pgtest"
	"github.com/flowerhq/flower/testkit/testbed"
)

// flowBriefName and flowGoalName are the starter's documents.
const flowBriefName, flowGoalName = flow.DefaultBriefName, flow.DefaultGoalName

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
			return flowerbin.TypedGoal("## 目标\n" + marker(r) + " 完成\n## 检查清单\n- ok.txt 存在")
		}},
		{Name: "judge", Match: scripted.Match{System: "你是独立评审", FirstUser: "请独立评审"}, Func: func(r scripted.Request) scripted.Reply {
			return flowerbin.TypedJudge(r.FirstUser(), flowerbin.DemoAchieved)
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
	t     testing.TB
	bed   *testbed.Bed
	store string
	bin   string
	hook  string
	repo  string
	// within, when set, bounds the workers in place of testbed.Cap.
	within time.Duration
}

func newFleetBed(t testing.TB, slow func(scripted.Request) int) *fleetBed {
	t.Helper()
	return newFleetBedWith(t, func() *scripted.Script { return fleetScript(slow) })
}

// newFleetBedWith is a fleetBed whose model answers with script().
func newFleetBedWith(t testing.TB, script func() *scripted.Script) *fleetBed {
	t.Helper()
	return newFleetBedOn(t, pgtest.URL(t), script)
}

// newFleetBedOn is newFleetBedWith on the store URL store (a private
// cluster's, say).
func newFleetBedOn(t testing.TB, store string, script func() *scripted.Script) *fleetBed {
	t.Helper()
	bed := testbed.NewFor(t, func(string) *scripted.Script { return script() })
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
	log                      string // the last worker's log
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
	args = append([]string{"worker", "--no-self-test", "--id", m.name, "--root", m.root, "--run-dir", m.runDir}, args...)
	cmd := testbed.Command(fb.t, fb.bin, args...)
	if fb.within > 0 {
		cmd = testbed.CommandWithin(fb.t, fb.within, fb.bin, args...)
	}
	cmd.Env, cmd.Dir = fb.env(m), fb.t.TempDir()
	logf, err := os.Create(filepath.Join(fb.t.TempDir(), m.name+".log"))
	if err != nil {
		fb.t.Fatal(err)
	}
	m.log = logf.Name()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		fb.t.Fatal(err)
	}
	fb.t.Cleanup(func() {
		logf.Close()
		if fb.t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			fb.t.Logf("worker %s:\n%s", m.name, flowerbin.Tail(b))
		}
	})
	return cmd
}

// stopWorker sends SIGTERM and waits for the worker to end.
func stopWorker(t testing.TB, cmd *exec.Cmd) {
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
	Note      string `json:"note"`
	Ask       string `json:"ask"`
	Attempts  []struct {
		Attempt   int    `json:"attempt"`
		Worker    string `json:"worker"`
		Workspace string `json:"workspace"`
		Error     string `json:"error"`
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
	testbed.Await(t, "the flow's end", func() bool { jobs = fb.ls(m); return finished(jobs) })
	stopWorker(t, w)
	j := jobs[0]
	if j.ID != id || j.State != "completed" || j.Verdict != "achieved" || j.Attempt != 1 || j.Worker != "m1" || j.Run == "" ||
		j.Workspace != filepath.Join(m.root, fmt.Sprintf("job-%d", id)) {
		t.Fatalf("job: %+v", j)
	}
}

// TestE2E_FleetTakeover: three worker processes, each its own HOME, run dir
// and workspace root, take six queued flows (one for the first worker, four
// for the other two's two slots each, one left waiting); the first worker is
// killed with -9 while its coder works. All six end achieved, each once in
// queue ls; only the killed worker's flow has a second attempt (on another
// machine), although flows outlast --rescue-after (the control: a rescue by
// age would have taken them); the continuation resumed the
// same coordinator session (its next request carries the earlier turn),
// with the brief and goal the first attempt wrote, never asking the
// clarifier or the goal-setter again.
func TestE2E_FleetTakeover(t *testing.T) {
	t.Parallel()
	const rescueAfter = 3 * time.Second
	var victimRoot string
	var once sync.Once
	hit := make(chan string, 1)
	fb := newFleetBed(t, func(r scripted.Request) int {
		if victimRoot == "" || !strings.Contains(r.Text(), victimRoot) {
			return 0
		}
		delay := 0
		once.Do(func() {
			hit <- regexp.MustCompile(regexp.QuoteMeta(victimRoot) + `/job-([0-9]+)`).FindStringSubmatch(r.Text())[1]
			delay = 15000 // the worker is killed long before
		})
		return delay
	})
	m1, m2, m3 := fb.machine("m1"), fb.machine("m2"), fb.machine("m3")
	victimRoot = m1.root
	const flows = 6
	for i := 1; i <= flows; i++ {
		fb.add(m2, "--repo", fb.repo, fmt.Sprintf("FLOW-%d 写 ok.txt", i))
	}
	w1 := fb.worker(m1, "--rescue-after", rescueAfter.String())
	testbed.Await(t, "the first worker's first flow", func() bool {
		for _, j := range fb.ls(m2) {
			if j.State == "running" && j.Worker == "m1" {
				return true
			}
		}
		return false
	})
	w2 := fb.worker(m2, "--rescue-after", rescueAfter.String(), "--concurrency", "2")
	w3 := fb.worker(m3, "--rescue-after", rescueAfter.String(), "--concurrency", "2")
	var victim string
	select {
	case victim = <-hit:
	case <-time.After(testbed.Left(t)):
		t.Fatal("the first worker's coder never started")
	}
	// Mid-flow: the work step's session is in the store's lineage of the
	// flow and its first turn (the delegation) is mirrored.
	testbed.Await(t, "the first attempt's coordinator turn in the store", func() bool {
		return fb.workTurnStored("job-" + victim)
	})
	if err := w1.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	w1.Wait()
	var jobs []qjob
	testbed.Await(t, "all six flows' end", func() bool { jobs = fb.ls(m3); return finished(jobs) })
	stopWorker(t, w2)
	stopWorker(t, w3)

	seen := map[string]int{}
	var vj qjob
	long := 0
	for _, j := range jobs {
		seen[flowMarker.FindString(j.Ask)]++
		if j.State != "completed" || j.Verdict != "achieved" {
			t.Errorf("job %d: %s, verdict %q", j.ID, j.State, j.Verdict)
		}
		if fmt.Sprint(j.ID) == victim {
			vj = j
			continue
		}
		if j.Attempt != 1 || len(j.Attempts) != 1 {
			t.Errorf("job %d (not the killed worker's) has attempt %d, %d attempt rows", j.ID, j.Attempt, len(j.Attempts))
		}
		if a := j.Attempts; len(a) == 1 && spanOf(a[0].StartedAt, a[0].EndedAt) > rescueAfter {
			long++
		}
	}
	if len(jobs) != flows || len(seen) != flows {
		t.Fatalf("queue ls: %d jobs, %d distinct flows", len(jobs), len(seen))
	}
	if long == 0 {
		t.Fatalf("control: no flow outlasted --rescue-after %s, so a rescue by age would not show", rescueAfter)
	}
	if vj.Attempt != 2 || len(vj.Attempts) != 2 || vj.Attempts[0].Worker != "m1" || vj.Worker == "m1" ||
		!strings.HasPrefix(vj.Workspace, m2.root) && !strings.HasPrefix(vj.Workspace, m3.root) {
		t.Fatalf("the killed worker's job: %+v", vj)
	}
	checkContinuation(t, fb, vj)
	if t.Failed() {
		for _, m := range []*fleetMachine{m2, m3} {
			filepath.WalkDir(m.runDir, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.Name() == "events.jsonl" {
					b, _ := os.ReadFile(p)
					for _, l := range strings.Split(string(b), "\n") {
						if strings.Contains(l, `"store"`) || strings.Contains(l, "resum") || strings.Contains(l, `"step"`) {
							t.Logf("%s: %.400s", p, l)
						}
					}
				}
				return nil
			})
		}
	}
}

// workTurnStored reports whether the flow's stored lineage names a work
// session and the store holds an assistant turn of it.
func (fb *fleetBed) workTurnStored(flowName string) bool {
	db, err := sql.Open("pgx", fb.store)
	if err != nil {
		fb.t.Fatal(err)
	}
	defer db.Close()
	var body []byte
	if db.QueryRow("SELECT body FROM documents WHERE flow = $1 AND name = 'lineage.json'", flowName).Scan(&body) != nil {
		return false
	}
	var lin map[string][]string
	if json.Unmarshal(body, &lin) != nil || len(lin[flow.WorkStepName]) == 0 {
		return false
	}
	var n int
	db.QueryRow(`SELECT count(*) FROM entries WHERE session_id = $1 AND subpath = '' AND position('"tool_use"' IN convert_from(entry, 'UTF8')) > 0`,
		lin[flow.WorkStepName][0]).Scan(&n)
	return n > 0
}

// spanOf is how long an attempt ran (RFC 3339 seconds; 0 when unknown).
func spanOf(start, end string) time.Duration {
	s, err1 := time.Parse(time.RFC3339, start)
	e, err2 := time.Parse(time.RFC3339, end)
	if err1 != nil || err2 != nil {
		return 0
	}
	return e.Sub(s)
}

// checkContinuation: the taken-over flow kept its coordinator session, its
// brief and its goal.
func checkContinuation(t *testing.T, fb *fleetBed, vj qjob) {
	t.Helper()
	marker := flowMarker.FindString(vj.Ask)
	var coord []scripted.Request
	for _, r := range fb.bed.Model.RequestsFor("coordinator") {
		if strings.Contains(r.Text(), marker+":") {
			coord = append(coord, r)
		}
	}
	if len(coord) < 2 {
		t.Fatalf("%s: %d coordinator requests, want the first attempt's and the continuation's", marker, len(coord))
	}
	first, last := coord[0], coord[len(coord)-1]
	if first.Session == "" || last.Session != first.Session {
		t.Errorf("%s: the continuation's coordinator session %q is not the first attempt's %q", marker, last.Session, first.Session)
	}
	if !strings.Contains(last.Messages().Raw, `"name":"Agent"`) || len(last.Messages().Array()) < 3 {
		t.Errorf("%s: the continuation's request lacks the earlier turn: %.1500s", marker, last.Messages().Raw)
	}
	if last.FirstUser() != first.FirstUser() || !strings.Contains(first.FirstUser(), marker+": 写 ok.txt") || !strings.Contains(first.FirstUser(), marker+" 完成") {
		t.Errorf("%s: the continuation does not carry the brief and goal of the first attempt:\nfirst: %.800s\nlast:  %.800s", marker, first.FirstUser(), last.FirstUser())
	}
	for _, conv := range []string{"clarify", "goal"} {
		n := 0
		for _, r := range fb.bed.Model.RequestsFor(conv) {
			if strings.Contains(r.Text(), marker+" ") || strings.Contains(r.Text(), marker+":") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: %d %s requests, want 1 (the continuation starts from the stored documents)", marker, n, conv)
		}
	}
	for _, name := range []string{flowBriefName, flowGoalName} {
		before, err1 := os.ReadFile(filepath.Join(vj.Attempts[0].Workspace, ".flower", "notes", name))
		after, err2 := os.ReadFile(filepath.Join(vj.Workspace, ".flower", "notes", name))
		if err1 != nil || err2 != nil || string(before) != string(after) {
			t.Errorf("%s: %s differs between the machines (%v, %v):\n%s\n---\n%s", marker, name, err1, err2, before, after)
		}
	}
}

// TestE2E_QueueCancelRunning: `flower queue cancel` of a flow whose coder is
// working stops it — its claude goes, the job is recorded cancelled, not
// retried — and the worker goes on: the next flow ends achieved (the
// control that the worker and the script work).
func TestE2E_QueueCancelRunning(t *testing.T) {
	t.Parallel()
	hit := make(chan struct{}, 1)
	fb := newFleetBed(t, func(r scripted.Request) int {
		if strings.Contains(r.Text(), "/job-1") {
			select {
			case hit <- struct{}{}:
			default:
			}
			return 30000
		}
		return 0
	})
	m := fb.machine("m1")
	id := fb.add(m, "--repo", fb.repo, "FLOW-1 写 ok.txt")
	w := fb.worker(m, "--rescue-after", "3s")
	select {
	case <-hit:
	case <-time.After(testbed.Left(t)):
		t.Fatal("the flow's coder never started")
	}
	hasClaude := func() bool {
		for _, name := range testbed.Descendants(w.Process.Pid) {
			if strings.Contains(name, "claude") {
				return true
			}
		}
		return false
	}
	if !hasClaude() {
		t.Fatal("control: no claude below the worker while its flow runs")
	}
	out, errOut, code := fb.flower(m, "queue", "cancel", fmt.Sprint(id))
	if code != 0 || !strings.Contains(out, "cancel") {
		t.Fatalf("queue cancel: exit %d: %s%s", code, out, errOut)
	}
	var jobs []qjob
	testbed.Await(t, "the cancelled flow's end", func() bool { jobs = fb.ls(m); return finished(jobs) })
	if j := jobs[0]; j.State != "cancelled" || j.Attempt != 1 || len(j.Attempts) != 1 || j.Attempts[0].EndedAt == "" {
		t.Fatalf("cancelled job: %+v", j)
	}
	if j := jobs[0]; !strings.HasPrefix(j.Note, "cancelled") || !strings.Contains(j.Attempts[0].Error, "cancelled") || strings.Contains(j.Note+j.Attempts[0].Error, "run the same command") {
		t.Errorf("the cancelled job does not say it was cancelled: note %q, attempt error %q", j.Note, j.Attempts[0].Error)
	}
	testbed.AwaitWithin(t, 30*time.Second, "the cancelled flow's claude gone", func() bool { return !hasClaude() })
	id2 := fb.add(m, "--repo", fb.repo, "FLOW-2 写 ok.txt")
	testbed.Await(t, "the next flow's end", func() bool { jobs = fb.ls(m); return finished(jobs) })
	stopWorker(t, w)
	if j := jobs[1]; j.ID != id2 || j.State != "completed" || j.Verdict != "achieved" {
		t.Fatalf("control: the flow after the cancel: %+v", j)
	}
}

// TestE2E_WorkerSigtermHandsBack: a worker that gets SIGTERM while its
// coder works waits --grace, then hands the flow back — available at once,
// no attempt spent — and exits; a worker on another machine resumes it
// (the same coordinator session, the stored brief and goal) to achieved.
func TestE2E_WorkerSigtermHandsBack(t *testing.T) {
	t.Parallel()
	var once sync.Once
	hit := make(chan struct{}, 1)
	var m1root string
	fb := newFleetBed(t, func(r scripted.Request) int {
		delay := 0
		if m1root != "" && strings.Contains(r.Text(), m1root) {
			once.Do(func() { hit <- struct{}{}; delay = 20000 })
		}
		return delay
	})
	m1, m2 := fb.machine("m1"), fb.machine("m2")
	m1root = m1.root
	id := fb.add(m1, "--repo", fb.repo, "FLOW-1 写 ok.txt")
	w1 := fb.worker(m1, "--rescue-after", "1m", "--grace", "1s")
	select {
	case <-hit:
	case <-time.After(testbed.Left(t)):
		t.Fatal("the flow's coder never started")
	}
	testbed.Await(t, "the coordinator's turn in the store", func() bool { return fb.workTurnStored(fmt.Sprintf("job-%d", id)) })
	t0 := time.Now()
	stopWorker(t, w1)
	if d := time.Since(t0); d > 15*time.Second {
		t.Errorf("the worker took %s to stop with --grace 1s", d)
	}
	j := fb.ls(m1)[0]
	if j.State != "available" || j.Attempt != 0 {
		t.Fatalf("after SIGTERM the flow is %s, attempt %d (want available, no attempt spent)", j.State, j.Attempt)
	}
	w2 := fb.worker(m2, "--rescue-after", "1m")
	var jobs []qjob
	testbed.Await(t, "the resumed flow's end", func() bool { jobs = fb.ls(m2); return finished(jobs) })
	stopWorker(t, w2)
	vj := jobs[0]
	if vj.State != "completed" || vj.Verdict != "achieved" || vj.Attempt != 1 || len(vj.Attempts) != 2 || vj.Worker != "m2" {
		t.Fatalf("the handed-back flow: %+v", vj)
	}
	checkContinuation(t, fb, vj)
}

// BenchmarkWorkerOverhead: the same scripted starter flow (clarify, goal,
// work with one delegation, judge) run as `flower "…"` in a fresh clone and
// as a queued flow on an idle `flower worker` (one flow at a time, the same
// store), in turns. direct-ms is the flower process's wall time; queued-ms
// runs from the enqueue to the job completed (seen by polling every 20 ms:
// the clone, River's pick-up, the documents kept in the store, the
// recording of the attempt); overhead-ms is the difference of the medians.
func BenchmarkWorkerOverhead(b *testing.B) {
	fb := newFleetBed(b, func(scripted.Request) int { return 0 })
	m := fb.machine("m1")
	w := fb.worker(m, "--rescue-after", "1m")
	defer stopWorker(b, w)
	f, err := fleet.Open(context.Background(), fb.store)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var direct, queued []time.Duration
	b.ResetTimer()
	for i := range b.N {
		ws := filepath.Join(b.TempDir(), "ws")
		if out, err := exec.Command("git", "clone", "-q", fb.repo, ws).CombinedOutput(); err != nil {
			b.Fatalf("%v %s", err, out)
		}
		run := func() {
			cmd := testbed.Command(b, fb.bin, "--json", "--timeout", "0", "--no-self-test", "--run-dir", m.runDir, "-C", ws, fmt.Sprintf("FLOW-%d 写 ok.txt", 1000+i))
			cmd.Env, cmd.Dir = fb.env(m), ws
			t0 := time.Now()
			if out, errOut, code := testbed.Exec(b, cmd); code != 0 {
				b.Fatalf("flower: exit %d\n%s\n%s", code, flowerbin.Tail([]byte(out)), errOut)
			}
			direct = append(direct, time.Since(t0))
		}
		queue := func() {
			t0 := time.Now()
			id, _, err := f.Add(context.Background(), fleet.FlowArgs{Ask: fmt.Sprintf("FLOW-%d 写 ok.txt", i), Repo: fb.repo}, fleet.AddOptions{})
			if err != nil {
				b.Fatal(err)
			}
			// Seen done within a poll (at most 200 ms) of its end.
			testbed.Await(b, fmt.Sprintf("job %d's end", id), func() bool {
				j, err := f.Get(context.Background(), id)
				if err != nil {
					b.Fatal(err)
				}
				if j.State != "completed" && j.State != "available" && j.State != "running" {
					b.Fatalf("job %d: %+v", id, j)
				}
				return j.State == "completed"
			})
			queued = append(queued, time.Since(t0))
		}
		if i%2 == 0 {
			run()
			queue()
		} else {
			queue()
			run()
		}
	}
	b.StopTimer()
	med := func(d []time.Duration) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[len(s)/2].Microseconds()) / 1000
	}
	b.ReportMetric(med(direct), "direct-ms")
	b.ReportMetric(med(queued), "queued-ms")
	b.ReportMetric(med(queued)-med(direct), "overhead-ms")
}

// BenchmarkFleetThroughput: the fleet against its ideal, in one run.
//
// Lone flows (FLOWER_BENCH_LONE, default 3) run one after the other on one
// idle worker: the median gives one flow's wall time (enqueue to end, on
// the database's clock) and its processor time — every process involved:
// the worker's flower and all its descendants (supervisors, claude, node,
// flower-hook), PostgreSQL's server and backends, and the test process
// (the scripted model server). Then FLOWER_BENCH_FLOWS flows (default 30)
// are queued at once for 3 workers already waiting (one flow each at a
// time, or FLOWER_BENCH_CONCURRENCY; their own HOME and run dir: three
// machines on one host).
//
// The ideal throughput is the lower of two limits: three lone flows side
// by side (one flow's wall × flows / 3) and the CPU-bound limit (one
// flow's processor time × flows / nproc); the ideal time is the longer of
// the two, and ratio is ideal / measured.
//
// Bare claude is held to the same ideal in the same run (claudeCeiling:
// `claude -p hi` alone, then as many runners as workers at once):
// claude-ceiling is the most any fleet of claude processes reaches on this
// machine, and ratio-of-ceiling the fleet's ratio over it.
//
// On a machine shared with others the ratio also measures them, so three
// figures tell the fleet's own part: others-cores is how many cores the
// rest of the machine kept busy meanwhile (its busy time less ours);
// ratio-cpu-left is the CPU-bound limit over the cores they left
// (nproc − others-cores) against the measured time; cpu-efficiency is the
// processor time of the lone flows against the fleet's per flow (below 1:
// the fleet spends more per flow, by contention or by its own work).
//
//	go test ./cmd/flower -run - -bench FleetThroughput -benchtime 1x -timeout 1h
func BenchmarkFleetThroughput(b *testing.B) {
	flows, lone := benchCount(b, "FLOWER_BENCH_FLOWS", 30), benchCount(b, "FLOWER_BENCH_LONE", 3)
	const workers = 3
	conc := benchCount(b, "FLOWER_BENCH_CONCURRENCY", 1)
	fb := newFleetBed(b, func(scripted.Request) int { return 0 })
	fb.within = time.Hour // 30 flows outlast testbed.Cap on a busy machine
	pool, err := pgxpool.New(context.Background(), fb.store)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	f, err := fleet.Open(context.Background(), fb.store)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	ms := []*fleetMachine{fb.machine("m1"), fb.machine("m2"), fb.machine("m3")}
	nproc := runtime.NumCPU()
	b.ResetTimer()
	for range b.N {
		ceiling, alone, together := claudeCeiling(b, workers, 6, nproc)
		w := fb.readyWorkers(ms[:1], 1)
		var walls, cpus []time.Duration
		for i := range lone {
			s := fb.measure(f, pool, w, []string{fmt.Sprintf("FLOW-L%d 写 ok.txt", i)})
			walls, cpus = append(walls, s.wall), append(cpus, s.cpu)
		}
		stopWorker(b, w[0])
		ws := fb.readyWorkers(ms, conc)
		asks := make([]string, flows)
		for i := range asks {
			asks[i] = fmt.Sprintf("FLOW-%d 写 ok.txt", i+1)
		}
		all := fb.measure(f, pool, ws, asks)
		for _, w := range ws {
			stopWorker(b, w)
		}
		one, cpu := median(walls), median(cpus)
		wallIdeal := one * time.Duration(flows) / workers
		cpuIdeal := cpu * time.Duration(flows) / time.Duration(nproc)
		ideal := max(wallIdeal, cpuIdeal) // the slower limit binds
		others := max(float64(all.busy-all.cpu)/float64(all.wall), 0)
		free := max(float64(nproc)-others, 0.1)
		b.ReportMetric(one.Seconds(), "one-flow-s")
		b.ReportMetric(cpu.Seconds(), "one-flow-cpu-s")
		b.ReportMetric(float64(nproc), "nproc")
		b.ReportMetric(wallIdeal.Seconds(), "ideal-wall-s")
		b.ReportMetric(cpuIdeal.Seconds(), "ideal-cpu-s")
		b.ReportMetric(all.wall.Seconds(), "all-s")
		b.ReportMetric(float64(flows)/all.wall.Minutes(), "flows/min")
		b.ReportMetric(float64(flows)/ideal.Minutes(), "ideal-flows/min")
		b.ReportMetric(ideal.Seconds()/all.wall.Seconds(), "ratio")
		b.ReportMetric(all.cpu.Seconds()/float64(flows), "fleet-cpu-s/flow")
		b.ReportMetric(all.workers.Seconds()/float64(flows), "workers-cpu-s/flow")
		b.ReportMetric(all.postgres.Seconds()/float64(flows), "pg-cpu-s/flow")
		b.ReportMetric((all.cpu-all.workers-all.postgres).Seconds()/float64(flows), "model-cpu-s/flow")
		b.ReportMetric(all.flow.Seconds(), "fleet-flow-s")
		b.ReportMetric(all.gap.Seconds()*1000, "gap-ms")
		b.ReportMetric(others, "others-cores")
		b.ReportMetric(cpu.Seconds()*float64(flows)/free/all.wall.Seconds(), "ratio-cpu-left")
		b.ReportMetric(cpu.Seconds()*float64(flows)/all.cpu.Seconds(), "cpu-efficiency")
		b.ReportMetric(ceiling, "claude-ceiling")
		b.ReportMetric(ideal.Seconds()/all.wall.Seconds()/ceiling, "ratio-of-ceiling")
		b.ReportMetric(alone.Seconds(), "claude-cpu-alone-s")
		b.ReportMetric(together.Seconds(), "claude-cpu-together-s")
	}
}

// claudeCeiling holds bare claude to the ideal FleetThroughput holds the
// fleet to: rounds runs of `claude -p hi` one after the other give one
// run's wall and processor time; then copies runners run rounds each at
// once, as the workers do. The ideal for the copies×rounds runs is the
// slower of two limits (one run's wall × rounds; one run's processor time
// × copies × rounds / nproc), and the ceiling is ideal / measured: no fleet
// of claude processes reaches more on this machine. It also returns one
// run's processor time alone and at once (the mean).
func claudeCeiling(b *testing.B, copies, rounds, nproc int) (ceiling float64, alone, together time.Duration) {
	bed := testbed.New(b, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main",
		Func: func(scripted.Request) scripted.Reply { return scripted.Reply{Text: "ok"} }}}})
	run := func() (wall, cpu time.Duration, err error) {
		cmd := bed.Command(testbed.Context(b), "-p", "hi")
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			return 0, 0, fmt.Errorf("claude -p hi: %v\n%s", err, out)
		}
		return time.Since(start), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
	}
	var walls, cpus []time.Duration
	for range rounds {
		w, c, err := run()
		if err != nil {
			b.Fatal(err)
		}
		walls, cpus = append(walls, w), append(cpus, c)
	}
	var mu sync.Mutex
	var spent time.Duration
	var errs []error
	var wg sync.WaitGroup
	start := time.Now()
	for range copies {
		wg.Go(func() {
			for range rounds {
				_, c, err := run()
				mu.Lock()
				spent, errs = spent+c, append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	all := time.Since(start)
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	n := time.Duration(copies * rounds)
	ideal := max(median(walls)*time.Duration(rounds), median(cpus)*n/time.Duration(nproc))
	return ideal.Seconds() / all.Seconds(), median(cpus), spent / n
}

// benchCount is a positive count from the environment, or def.
func benchCount(b *testing.B, env string, def int) int {
	v := os.Getenv(env)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: give a positive count", env, v)
	}
	return n
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// readyWorkers starts a worker on each machine (concurrency flows at
// once) and waits until each says it takes flows.
func (fb *fleetBed) readyWorkers(ms []*fleetMachine, concurrency int) []*exec.Cmd {
	var ws []*exec.Cmd
	for _, m := range ms {
		ws = append(ws, fb.worker(m, "--rescue-after", "1m", "--concurrency", strconv.Itoa(concurrency)))
	}
	for _, m := range ms {
		testbed.Await(fb.t, m.name+"'s worker taking flows", func() bool {
			b, _ := os.ReadFile(m.log)
			return strings.Contains(string(b), "taking flows")
		})
	}
	return ws
}

// fleetSpan is what a batch of flows cost: wall from the first enqueue to
// the last end (the database's clock); processor time of every process
// involved, of the workers' trees and of PostgreSQL's; the whole machine's
// busy time; a flow's mean run on a worker and a worker's mean idle gap
// between two flows (negative when a worker runs several at once).
type fleetSpan struct {
	wall, cpu, workers, postgres, busy, flow, gap time.Duration
}

// measure queues asks at once for the running workers ws and waits for
// their end.
func (fb *fleetBed) measure(f *fleet.Fleet, pool *pgxpool.Pool, ws []*exec.Cmd, asks []string) fleetSpan {
	fb.t.Helper()
	ctx := context.Background()
	snap := func() (all, wk, pg, busy time.Duration) {
		for _, w := range ws {
			wk += testbed.TreeCPU(w.Process.Pid)
		}
		return testbed.TreeCPU(os.Getpid()), wk, testbed.TreeCPU(pgtest.ServerPID()), testbed.MachineBusy()
	}
	a0, w0, p0, m0 := snap()
	ids := make([]int64, 0, len(asks))
	for _, ask := range asks {
		id, _, err := f.Add(ctx, fleet.FlowArgs{Ask: ask, Repo: fb.repo}, fleet.AddOptions{})
		if err != nil {
			fb.t.Fatal(err)
		}
		ids = append(ids, id)
	}
	testbed.AwaitWithin(fb.t, 20*time.Minute, "the queued flows' end", func() bool {
		var n int
		err := pool.QueryRow(ctx, "SELECT count(*) FROM river_job WHERE id = ANY($1) AND finalized_at IS NOT NULL", ids).Scan(&n)
		return err == nil && n == len(ids)
	})
	a1, w1, p1, m1 := snap()
	s := fleetSpan{cpu: a1 - a0, workers: w1 - w0, postgres: p1 - p0, busy: m1 - m0}
	var wall, flow, gap float64
	if err := pool.QueryRow(ctx, fleetSpanSQL, ids).Scan(&wall, &flow, &gap); err != nil {
		fb.t.Fatal(err)
	}
	s.wall, s.flow, s.gap = secs(wall), secs(flow), secs(gap)
	return s
}

// fleetSpanSQL: the batch's wall, a flow's mean time on its worker, and
// a worker's mean idle time between the end of one flow and the start of
// its next (in seconds).
const fleetSpanSQL = `WITH j AS (
		SELECT created_at, attempted_at, finalized_at, attempted_by[array_upper(attempted_by, 1)] AS w,
			lag(finalized_at) OVER (PARTITION BY attempted_by[array_upper(attempted_by, 1)] ORDER BY attempted_at) AS prev
		FROM river_job WHERE id = ANY($1))
	SELECT extract(epoch FROM max(finalized_at) - min(created_at))::float8,
		extract(epoch FROM avg(finalized_at - attempted_at))::float8,
		coalesce(extract(epoch FROM avg(attempted_at - prev))::float8, 0)
	FROM j`

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
