package main

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/sessionstore"
	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/testkit/pgtest"
	"github.com/flowerhq/flower/testkit/testbed"
)

// TestE2E_DatabaseOutage is issue 33's database outage under the real
// binary: two `flower worker` processes on a PostgreSQL cluster of this
// test's own; the server is stopped while a queued flow's judge step
// runs (the judge's request has reached the model), then started again.
//
//   - 10s, --rescue-after 30s (the outage is shorter than the lease): the
//     judge answers while the database is away, the flow ends then; its
//     session lines, run row and end are kept and made once the database
//     is back; the flow ran once (one attempt).
//   - 90s, --rescue-after 5s (the outage is eighteen leases long): the
//     flow's claude dies at the lease's local deadline; what the attempt
//     wrote meanwhile is spooled and made when its worker reconnects; the
//     flow is taken up again and ends achieved on its second attempt,
//     never a third.
//
// Afterwards every record is there: the verdict, cost and end of the
// job's attempts, their run rows, the judge sessions (every line claude
// wrote to its own transcript is in the store) and the flow's documents;
// `flower queue ls` and its --json agree with River's metadata; both
// workers never exited and the next flow ends achieved. Controls: the
// workers' logs show that writes did fail during the outage and were
// kept (without the outbox they were lost), and the record check finds a
// line deleted from the store.
func TestE2E_DatabaseOutage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name          string
		down, rescue  time.Duration
		judgeDelay    time.Duration // the first judge's answer waits this long
		wantAttempts  int
		wantSpoolMade bool // the attempt's writes outlived its Close: spooled, then made
	}{
		{"90s", 90 * time.Second, 5 * time.Second, 5 * time.Minute, 2, true},
		{"10s", 10 * time.Second, 30 * time.Second, 6 * time.Second, 1, false},
	} {
		// Not parallel: the cases run one after the other in the parent's
		// slot, as soon as it has one. Mostly waiting (the outages), as
		// parallel subtests they queued behind every other test of the
		// package and ran alone at the suite's end (minutes of a half-idle
		// machine); here they wait while the other packages compute.
		t.Run(c.name, func(t *testing.T) {
			databaseOutage(t, c.down, c.rescue, c.judgeDelay, c.wantAttempts, c.wantSpoolMade)
		})
	}
}

func databaseOutage(t *testing.T, down, rescue, judgeDelay time.Duration, wantAttempts int, wantSpoolMade bool) {
	pc := pgtest.Private(t)
	asked := make(chan struct{}, 1)
	var once sync.Once
	fb := newFleetBedOn(t, pc.URL(), func() *scripted.Script {
		s := fleetScript(func(scripted.Request) int { return 0 })
		for i := range s.Conversations {
			if c := &s.Conversations[i]; c.Name == "judge" {
				judge := c.Func
				c.Func = func(r scripted.Request) scripted.Reply {
					reply := judge(r)
					if flowMarker.FindString(r.Text()) == "FLOW-1" {
						once.Do(func() { asked <- struct{}{}; reply.DelayMS = int(judgeDelay.Milliseconds()) })
					}
					return reply
				}
			}
		}
		return s
	})
	m1, m2 := fb.machine("m1"), fb.machine("m2")
	id := fb.add(m1, "--repo", fb.repo, "--rounds", "1", "FLOW-1 写 ok.txt")
	w1 := fb.worker(m1, "--rescue-after", rescue.String())
	w2 := fb.worker(m2, "--rescue-after", rescue.String())
	logs := map[string]string{"m1": workerLog(t, w1), "m2": workerLog(t, w2)}
	select {
	case <-asked:
	case <-time.After(testbed.Left(t)):
		t.Fatal("the flow's judge was never asked")
	}
	workers := map[string]*exec.Cmd{"m1": w1, "m2": w2}
	wr := workers[fb.ls(m1)[0].Worker]
	if wr == nil {
		t.Fatalf("no worker runs the flow whose judge was asked: %+v", fb.ls(m1)[0])
	}
	if !hasClaudeBelow(wr.Process.Pid) {
		t.Fatal("control: no claude below the worker whose flow's judge was asked")
	}
	pc.Stop()
	t0 := time.Now()
	if wantAttempts > 1 {
		// The lease's local deadline stops the flow's claude, no database
		// needed.
		testbed.AwaitWithin(t, 3*rescue, "the flow's claude stopped at the lease deadline", func() bool { return !hasClaudeBelow(wr.Process.Pid) })
	}
	// The outage's own length: a deliberate span, nothing to wait for.
	<-time.After(down - time.Since(t0))
	for name, w := range workers {
		if !alive(w.Process.Pid) {
			t.Fatalf("worker %s exited during the outage", name)
		}
	}
	pc.Start()
	back := time.Now()
	var jobs []qjob
	testbed.Await(t, "the flow's end after the outage", func() bool { jobs = fb.ls(m1); return finished(jobs) })
	t.Logf("outage %s (--rescue-after %s): the flow ended %s after the database came back", down, rescue, time.Since(back).Round(100*time.Millisecond))
	j := jobs[0]
	if j.ID != id || j.State != "completed" || j.Verdict != "achieved" || j.Attempt != wantAttempts || len(j.Attempts) != wantAttempts {
		t.Fatalf("the flow after the outage: %+v (want achieved on attempt %d, %d attempt rows)", j, wantAttempts, wantAttempts)
	}
	problems := fb.outageRecords(m1, id, wantAttempts > 1, m1, m2)
	for _, p := range problems {
		t.Error(p)
	}
	if n := judgeSessions(fb, "FLOW-1"); len(n) != wantAttempts {
		t.Errorf("the flow was judged in %d sessions, want %d (one per attempt, never a third run)", len(n), wantAttempts)
	}
	// The next flow, on whichever worker: both still serve.
	for name, w := range workers {
		if !alive(w.Process.Pid) {
			t.Errorf("worker %s exited after the outage", name)
		}
	}
	id2 := fb.add(m1, "--repo", fb.repo, "FLOW-2 写 ok.txt")
	testbed.Await(t, "the next flow's end", func() bool { jobs = fb.ls(m1); return finished(jobs) })
	if j2 := jobs[1]; j2.ID != id2 || j2.State != "completed" || j2.Verdict != "achieved" || j2.Attempt != 1 {
		t.Errorf("the flow after the outage: %+v", j2)
	}
	stopWorker(t, w1)
	stopWorker(t, w2)
	outageControls(t, fb, readLog(logs["m1"])+readLog(logs["m2"]), id, wantAttempts, wantSpoolMade, m1, m2)
}

// outageControls: the workers' logs (all) show that writes did fail
// during the outage and were kept (made from memory once it ended, or
// spooled and made on reconnecting), and the record check finds a line
// missing from the store.
func outageControls(t *testing.T, fb *fleetBed, all string, id int64, wantAttempts int, wantSpoolMade bool, m1, m2 *fleetMachine) {
	// Controls: writes did fail during the outage and were kept (made
	// from memory once it ended, or spooled and made on reconnecting).
	if !strings.Contains(all, "the session store cannot be reached") || !regexp.MustCompile(`the session store is back: [1-9][0-9]* kept writes made|made [1-9][0-9]* spooled writes of the session store`).MatchString(all) {
		t.Errorf("control: no worker says it kept and later made the store's writes of the outage:\n%s", flowerbin.Tail([]byte(all)))
	}
	if wantSpoolMade && !regexp.MustCompile(`made [1-9][0-9]* spooled writes of the session store`).MatchString(all) {
		t.Errorf("control: the attempt the outage stopped spooled nothing that its worker made on reconnecting:\n%s", flowerbin.Tail([]byte(all)))
	}
	for _, l := range strings.Split(all, "\n") {
		if strings.Contains(l, "session store") || strings.Contains(l, "spooled") || strings.Contains(l, "database is back") {
			t.Logf("worker log: %s", l)
		}
	}
	// Control: the record check finds a line missing from the store.
	if sid := judgeSessions(fb, "FLOW-1"); len(sid) > 0 {
		fb.sqlExec("DELETE FROM entries WHERE ctid IN (SELECT ctid FROM entries WHERE session_id = $1 AND uuid IS NOT NULL LIMIT 1)", sid[0])
		if again := fb.outageRecords(m1, id, wantAttempts > 1, m1, m2); len(again) == 0 {
			t.Error("control: the record check misses a judge line deleted from the store")
		}
	}
}

// workerLog is the file fleetBed.worker logs w to.
func workerLog(t *testing.T, w *exec.Cmd) string {
	f, ok := w.Stdout.(*os.File)
	if !ok {
		t.Fatal("the worker does not log to a file")
	}
	return f.Name()
}

func readLog(p string) string { b, _ := os.ReadFile(p); return string(b) }

// alive reports whether pid runs (a zombie, exited but not reaped, does
// not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(b), ") ")
	return after != "" && after[0] != 'Z' && after[0] != 'X'
}

func hasClaudeBelow(pid int) bool {
	for _, name := range testbed.Descendants(pid) {
		if strings.Contains(name, "claude") {
			return true
		}
	}
	return false
}

// judgeSessions are the claude sessions that judged the flow marked
// marker, in the order the model first saw them.
func judgeSessions(fb *fleetBed, marker string) []string {
	var ids []string
	for _, r := range fb.bed.Model.RequestsFor("judge") {
		if flowMarker.FindString(r.Text()) == marker && r.Session != "" && !containsString(ids, r.Session) {
			ids = append(ids, r.Session)
		}
	}
	return ids
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (fb *fleetBed) db() *sql.DB {
	db, err := sql.Open("pgx", fb.store)
	if err != nil {
		fb.t.Fatal(err)
	}
	return db
}

func (fb *fleetBed) sqlExec(q string, args ...any) {
	db := fb.db()
	defer db.Close()
	if _, err := db.Exec(q, args...); err != nil {
		fb.t.Fatalf("%s: %v", q, err)
	}
}

// outageRecords lists what is missing or disagrees in job id's records:
// queue ls --json against River's row and metadata and against its text
// form; every attempt ended, the last with the verdict and a cost; a run
// row for every attempt's run; the flow's documents; every line of every
// judge session's transcript (and, when the flow was not resumed, of
// every session of its runs) in the store.
func (fb *fleetBed) outageRecords(m *fleetMachine, id int64, resumed bool, machines ...*fleetMachine) []string {
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	var j qjob
	for _, x := range fb.ls(m) {
		if x.ID == id {
			j = x
		}
	}
	var out struct {
		Attempts []struct {
			Run     string  `json:"run"`
			Error   string  `json:"error"`
			Verdict string  `json:"verdict"`
			CostUSD float64 `json:"cost_usd"`
			EndedAt string  `json:"ended_at"`
		} `json:"attempts"`
		CostUSD float64 `json:"cost_usd"`
	}
	raw, _, _ := fb.flower(m, "queue", "ls", "--json")
	var all []json.RawMessage
	json.Unmarshal([]byte(raw), &all)
	for _, r := range all {
		var probe qjob
		if json.Unmarshal(r, &probe) == nil && probe.ID == id {
			json.Unmarshal(r, &out)
		}
	}
	db := fb.db()
	defer db.Close()
	var state, verdict string
	var attempt int
	var cost float64
	if err := db.QueryRow(`SELECT state::text, attempt, coalesce(metadata->'output'->>'verdict', ''), coalesce((metadata->'output'->>'cost_usd')::float8, 0)
		FROM river_job WHERE id = $1`, id).Scan(&state, &attempt, &verdict, &cost); err != nil {
		bad("River's row of job %d: %v", id, err)
	}
	if state != j.State || attempt != j.Attempt || verdict != j.Verdict || cost != out.CostUSD || cost <= 0 {
		bad("queue ls --json (%s, attempt %d, %q, $%v) and River's metadata (%s, attempt %d, %q, $%v) disagree", j.State, j.Attempt, j.Verdict, out.CostUSD, state, attempt, verdict, cost)
	}
	text, _, _ := fb.flower(m, "queue", "ls")
	if !regexp.MustCompile(fmt.Sprintf(`(?m)^%d\s+%s\s+%d\s+\S+\s+%s\s+%s\s`, id, regexp.QuoteMeta(state), attempt, regexp.QuoteMeta(j.Run), regexp.QuoteMeta(verdict))).MatchString(text) {
		bad("queue ls does not show job %d as River has it (%s, attempt %d, run %s, %s):\n%s", id, state, attempt, j.Run, verdict, text)
	}
	runs := map[string]bool{}
	rows, err := db.Query("SELECT run FROM runs")
	if err == nil {
		for rows.Next() {
			var r string
			rows.Scan(&r)
			runs[r] = true
		}
		rows.Close()
	}
	for i, a := range out.Attempts {
		if a.EndedAt == "" || a.Run == "" || !runs[a.Run] {
			bad("attempt %d: ended %q, run %q (a run row: %v)", i+1, a.EndedAt, a.Run, runs[a.Run])
		}
		if last := i == len(out.Attempts)-1; last && (a.Verdict != "achieved" || a.CostUSD <= 0) {
			bad("the last attempt's record: verdict %q, cost $%v", a.Verdict, a.CostUSD)
		} else if !last && (a.Verdict != "" || a.Error == "") {
			bad("attempt %d, stopped by the outage, records verdict %q and error %q (want no verdict, the reason)", i+1, a.Verdict, a.Error)
		}
	}
	var docs int
	db.QueryRow("SELECT count(*) FROM documents WHERE flow = $1 AND name IN ('lineage.json', $2, $3)", fmt.Sprintf("job-%d", id),
		"notes/"+flowBriefName, "notes/"+flowGoalName).Scan(&docs)
	if docs != 3 {
		bad("the flow's documents in the store: %d of brief, goal and lineage", docs)
	}
	problems = append(problems, fb.sessionsStored(db, resumed, machines)...)
	return problems
}

// sessionsStored checks that every line with a uuid of claude's own
// transcripts (in every machine's run dir) is in the store under its key:
// the judge sessions always; every session when resumed is false (a
// resumed session's file starts from the store's trimmed and repaired
// view, which is no line claude wrote).
func (fb *fleetBed) sessionsStored(db *sql.DB, resumed bool, machines []*fleetMachine) []string {
	judges := map[string]bool{}
	for _, s := range judgeSessions(fb, "FLOW-1") {
		judges[s] = true
	}
	var problems []string
	checked, total := map[string]bool{}, 0
	for _, m := range machines {
		root := filepath.Join(m.runDir, "claude-config", "projects")
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
				return nil
			}
			key, _, kerr := sessionstore.KeyFromPath(p)
			if kerr != nil || resumed && !judges[key.SessionID] {
				return nil
			}
			stored := map[string]bool{}
			rows, err := db.Query("SELECT uuid FROM entries WHERE project_key = $1 AND session_id = $2 AND subpath = $3 AND uuid IS NOT NULL",
				key.ProjectKey, key.SessionID, key.Subpath)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", key, err))
				return nil
			}
			for rows.Next() {
				var u string
				rows.Scan(&u)
				stored[u] = true
			}
			rows.Close()
			missing, lines := 0, 0
			for _, u := range uuidsOf(p) {
				lines++
				if !stored[u] {
					missing++
				}
			}
			checked[key.SessionID] = true
			total += lines
			if missing > 0 {
				problems = append(problems, fmt.Sprintf("session %s: %d of its %d transcript lines are not in the store", key, missing, lines))
			}
			return nil
		})
	}
	fb.t.Logf("checked %d sessions' transcripts against the store (%d lines)", len(checked), total)
	for s := range judges {
		if !checked[s] {
			problems = append(problems, "judge session "+s+": no transcript found to check")
		}
	}
	return problems
}

// uuidsOf lists the uuids of a JSONL transcript's lines.
func uuidsOf(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var e struct {
			UUID string `json:"uuid"`
		}
		if json.Unmarshal(bytes.TrimSpace(sc.Bytes()), &e) == nil && e.UUID != "" {
			out = append(out, e.UUID)
		}
	}
	return out
}
