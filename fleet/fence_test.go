package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flowerhq/flower/testkit/testbed"
)

// TestStaleWorkerCannotTouchTheJob is issue 33's paused worker in one
// process: worker A's lease renewals stop (as if STOPped) while its flow
// runs; its local deadline stops the flow at once; worker B takes the flow
// over (after the margin) and runs it; then A wakes and ends its attempt.
// A's hand-back and its attempt's end are refused (its token is stale):
// B's run stays running, ends achieved, and the flow ran twice, never a
// third time; the records show the takeover; A goes on serving. Control:
// with the trigger dropped, A's hand-back makes B's running job available
// again (the third run of the issue).
func TestStaleWorkerCannotTouchTheJob(t *testing.T) {
	for _, control := range []bool{false, true} {
		t.Run(map[bool]string{false: "fenced", true: "control: no trigger"}[control], func(t *testing.T) {
			staleWorker(t, control)
		})
	}
}

func staleWorker(t *testing.T, control bool) {
	f := open(t)
	ctx := context.Background()
	if control {
		if _, err := f.pool.Exec(ctx, "DROP TRIGGER flower_fence ON river_job"); err != nil {
			t.Fatal(err)
		}
	}
	// Every try to end a running flow's job is noted (a trigger that fires
	// before the fence and changes nothing), so the test can await A's.
	if _, err := f.pool.Exec(ctx, `CREATE TABLE test_job_ends (worker text);
CREATE FUNCTION test_note_end() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO test_job_ends VALUES (coalesce(NEW.metadata->'output'->'fence'->>'worker', '')); RETURN NEW; END $$;
CREATE TRIGGER a_note_end BEFORE UPDATE ON river_job FOR EACH ROW
    WHEN (OLD.kind = 'flower_flow' AND OLD.state = 'running' AND NEW.state <> 'running') EXECUTE FUNCTION test_note_end();`); err != nil {
		t.Fatal(err)
	}
	var frozen atomic.Bool
	var runs atomic.Int32
	aStopped, wake, bRunning, bRelease := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
	runA := func(ctx context.Context, r *FlowRun) (Outcome, error) {
		runs.Add(1)
		if r.Args.Ask != "first" {
			return Outcome{Verdict: "achieved"}, nil
		}
		frozen.Store(true)
		<-ctx.Done() // the local deadline
		close(aStopped)
		<-wake // the worker was stopped: it ends its attempt only now
		return Outcome{}, ctx.Err()
	}
	runB := func(ctx context.Context, r *FlowRun) (Outcome, error) {
		runs.Add(1)
		close(bRunning)
		<-bRelease
		return Outcome{Verdict: "achieved", Run: "run-b"}, nil
	}
	const rescue = 600 * time.Millisecond
	stopA := workWith(t, f, WorkOptions{ID: "A", RescueAfter: rescue, frozen: frozen.Load, Runner: runA})
	defer stopA()
	id := add(t, f, "first")
	<-aStopped
	if j, _ := f.Get(ctx, id); j.State != "running" || j.Worker != "A" {
		t.Fatalf("A's flow stopped at its local deadline before anyone took it over: %+v", j)
	}
	stopB := workWith(t, f, WorkOptions{ID: "B", RescueAfter: rescue, Runner: runB})
	<-bRunning
	close(wake)
	frozen.Store(false)
	if control {
		testbed.Await(t, "control: A's hand-back applied to B's running job", func() bool { return state(t, f, id) != "running" })
		close(bRelease)
		stopB()
		return
	}
	// A's end is refused: await its word, then B's job is still B's.
	testbed.Await(t, "A's attempt row not overwritten and B still running", func() bool {
		j, _ := f.Get(ctx, id)
		return j.State == "running" && j.Worker == "B" && len(j.Attempts) == 2
	})
	testbed.Await(t, "A's completer's try to end the job", func() bool {
		var n int
		f.pool.QueryRow(ctx, "SELECT count(*) FROM test_job_ends WHERE worker = 'A'").Scan(&n)
		return n > 0
	})
	if j, _ := f.Get(ctx, id); j.State != "running" || j.Worker != "B" {
		t.Fatalf("A's stale hand-back changed B's job: %+v", j)
	}
	close(bRelease)
	testbed.Await(t, "B's end", func() bool { return state(t, f, id) == "completed" })
	stopB()
	j, _ := f.Get(ctx, id)
	if runs.Load() != 2 || j.Attempt != 2 || len(j.Attempts) != 2 || j.Verdict != "achieved" || j.TakenOver != 1 {
		t.Fatalf("runs %d, job %+v", runs.Load(), j)
	}
	if a := j.Attempts[0]; a.Worker != "A" || a.EndedAt == "" || a.Error == "" {
		t.Errorf("A's attempt row does not show the takeover: %+v", a)
	}
	// A goes on serving.
	id2 := add(t, f, "second")
	testbed.Await(t, "A serves the next flow", func() bool { return state(t, f, id2) == "completed" })
	if j, _ := f.Get(ctx, id2); j.Worker != "A" {
		t.Errorf("the next flow ran on %s", j.Worker)
	}
}

// workWith runs a worker with o (test defaults filled) until stop.
func workWith(t *testing.T, f *Fleet, o WorkOptions) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	o.PollInterval, o.Grace = 100*time.Millisecond, time.Minute
	o.Logf = func(format string, a ...any) { t.Logf(format, a...) }
	go func() { done <- f.Work(ctx, o) }()
	var once atomic.Bool
	return func() {
		if once.Swap(true) {
			return
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("work %s: %v", o.ID, err)
		}
	}
}

// TestWaitAndPermanent: a Runner's WaitError snoozes the job with its
// reason shown in the job's note and spends no attempt, and it runs once
// the wait is over; a PermanentError cancels the job at once (attempt 1,
// never retried) with its reason; a plain error is retried (the control)
// and says so.
func TestWaitAndPermanent(t *testing.T) {
	f := open(t)
	var waited atomic.Int32
	seen := make(chan string, 8)
	release := make(chan struct{})
	runner := func(ctx context.Context, r *FlowRun) (Outcome, error) {
		switch r.Args.Ask {
		case "busy":
			if waited.Add(1) == 1 {
				return Outcome{}, &WaitError{Reason: "workspace /w is busy: run r1", After: 200 * time.Millisecond}
			}
			<-release
			return Outcome{Verdict: "achieved"}, nil
		case "missing":
			return Outcome{}, Permanent(errors.New("workspace /no/such: no such directory"))
		}
		seen <- r.Args.Ask
		return Outcome{}, errors.New("disk full")
	}
	stop := work(t, f, "w1", time.Minute, time.Minute, runner)
	defer stop()
	busy, missing, flaky := add(t, f, "busy"), add(t, f, "missing"), add(t, f, "flaky")
	<-seen
	testbed.Await(t, "the outcomes", func() bool {
		j, _ := f.Get(context.Background(), flaky)
		return state(t, f, missing) == "cancelled" && j.State != "running" && len(j.Errors) > 0
	})
	testbed.Await(t, "the busy flow's second try", func() bool { return waited.Load() >= 2 })
	close(release)
	testbed.Await(t, "the busy flow's end", func() bool { return state(t, f, busy) == "completed" })
	ctx := context.Background()
	if j, _ := f.Get(ctx, busy); j.Attempt != 1 || len(j.Attempts) != 1 {
		t.Errorf("the flow that waited spent attempts: %d, rows %d", j.Attempt, len(j.Attempts))
	}
	if j, _ := f.Get(ctx, missing); j.Attempt != 1 || !strings.Contains(j.Note, "cancelled: ") || !strings.Contains(j.Note, "no such directory") {
		t.Errorf("the permanent failure: attempt %d, note %q", j.Attempt, j.Note)
	}
	if j, _ := f.Get(ctx, flaky); !strings.Contains(j.Note, "retried (infrastructure") || !strings.Contains(j.Note, "disk full") {
		t.Errorf("control: the retried failure's note %q", j.Note)
	}
}

// TestWaitingNote: a job snoozed by a WaitError shows its reason while it
// waits (the note comes from the job's recorded output).
func TestWaitingNote(t *testing.T) {
	if got := jobNote(Job{State: "scheduled", waiting: "workspace /w is busy"}); got != "waiting: workspace /w is busy" {
		t.Errorf("note %q", got)
	}
	if got := jobNote(Job{State: "running", waiting: "stale"}); got != "" {
		t.Errorf("a running job's note %q", got)
	}
}

// TestSpoolReplay: an attempt's end spooled while the database was away is
// written when a worker starts with the spool (its file removed, private
// while it lasted), and one that ended with a verdict completes its job
// with the output River would have recorded (not run again); one whose
// token went stale since (taken over) is dropped and the row and the job
// keep what they had — the control that replay is fenced; one whose token
// a retry took since (River retried the job before the record got in: its
// row is still open) keeps its record but does not complete the job; an
// end spooled without a verdict leaves the job to River's retry — the
// control that completion follows the verdict.
func TestSpoolReplay(t *testing.T) {
	f := open(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "spool")
	cur, stale, retried, failed := add(t, f, "current"), add(t, f, "stale"), add(t, f, "retried"), add(t, f, "failed")
	for _, id := range []int64{cur, stale, retried, failed} {
		f.pool.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id = $1`, id)
		f.pool.Exec(ctx, `INSERT INTO flower_fences (job_id, epoch, worker, attempt) VALUES ($1, 1, 'w1', 1)`, id)
		f.pool.Exec(ctx, `INSERT INTO flower_flow_attempts (job_id, attempt, worker, epoch) VALUES ($1, 1, 'w1', 1)`, id)
		out, complete := Outcome{Verdict: "achieved", CostUSD: 0.5}, true
		if id == failed {
			out, complete = Outcome{Error: "judge step failed"}, false
		}
		p, err := spool(dir, spooled{JobID: id, Attempt: 1, Worker: "w1", Fence: token{Epoch: 1, Worker: "w1"}, Outcome: out, Complete: complete})
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Stat(p); st == nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("spool file %s: %v", p, st)
		}
	}
	f.pool.Exec(ctx, "UPDATE flower_fences SET epoch = 2 WHERE job_id = ANY($1)", []int64{stale, retried})
	f.pool.Exec(ctx, "UPDATE flower_flow_attempts SET ended_at = now(), error = 'taken over' WHERE job_id = $1", stale) // as takeOver does
	replay(ctx, f.pool, dir, t.Logf)
	if left, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(left) != 0 {
		t.Errorf("spool files left: %v", left)
	}
	for id, want := range map[int64][2]string{cur: {"achieved", "completed"}, stale: {"", "running"}, retried: {"achieved", "running"}, failed: {"", "running"}} {
		j, _ := f.Get(ctx, id)
		if len(j.Attempts) != 1 || j.Attempts[0].Verdict != want[0] || j.State != want[1] {
			t.Errorf("job %d: state %s, attempts %+v; want verdict %q, state %s", id, j.State, j.Attempts, want[0], want[1])
		}
		var meta string
		f.pool.QueryRow(ctx, `SELECT coalesce(metadata->'output'->>'verdict', '') FROM river_job WHERE id = $1`, id).Scan(&meta)
		if meta != map[bool]string{true: want[0]}[want[1] == "completed"] {
			t.Errorf("job %d: River's recorded verdict %q, want %q (queue ls and River's metadata agree)", id, meta, want[0])
		}
	}
}

// TestStaleOutputCannotOverwriteAFinishedFlow: once a flow's job is
// completed, a merge of its recorded output under a stale token (what a
// stopped worker's River completer does when the database is back: River
// merges metadata whatever the job's state) is refused; one under the
// current token goes in. Control: with the trigger dropped, the stale
// merge overwrites the outcome that completed the flow (what
// TestE2E_DatabaseOutage/90s once saw: queue ls and River's metadata
// disagreed).
func TestStaleOutputCannotOverwriteAFinishedFlow(t *testing.T) {
	for _, control := range []bool{false, true} {
		t.Run(map[bool]string{false: "fenced", true: "control: no trigger"}[control], func(t *testing.T) {
			f := open(t)
			ctx := context.Background()
			stop := work(t, f, "w1", time.Minute, time.Minute, func(ctx context.Context, r *FlowRun) (Outcome, error) {
				return Outcome{Verdict: "achieved", CostUSD: 0.5}, nil
			})
			id := add(t, f, "done")
			testbed.Await(t, "the flow's end", func() bool { return state(t, f, id) == "completed" })
			stop()
			if control {
				if _, err := f.pool.Exec(ctx, "DROP TRIGGER flower_fence ON river_job"); err != nil {
					t.Fatal(err)
				}
			}
			var epoch int64
			if err := f.pool.QueryRow(ctx, "SELECT epoch FROM flower_fences WHERE job_id = $1", id).Scan(&epoch); err != nil {
				t.Fatal(err)
			}
			merge := func(e int64, verdict string) {
				t.Helper()
				out := fmt.Sprintf(`{"output": {"verdict": %q, "fence": {"epoch": %d, "worker": "w0"}}}`, verdict, e)
				if _, err := f.pool.Exec(ctx, "UPDATE river_job SET metadata = metadata || $2::jsonb WHERE id = $1", id, out); err != nil {
					t.Fatal(err)
				}
			}
			verdict := func() string {
				var v string
				if err := f.pool.QueryRow(ctx, "SELECT coalesce(metadata->'output'->>'verdict', '') FROM river_job WHERE id = $1", id).Scan(&v); err != nil {
					t.Fatal(err)
				}
				return v
			}
			merge(epoch-1, "")
			if got, want := verdict(), map[bool]string{false: "achieved", true: ""}[control]; got != want {
				t.Fatalf("after a stale merge the recorded verdict is %q, want %q", got, want)
			}
			if !control {
				merge(epoch, "not_yet")
				if got := verdict(); got != "not_yet" {
					t.Fatalf("a merge under the current token was refused: verdict %q", got)
				}
			}
		})
	}
}
