package fleet

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flowerhq/flower/testkit/pgtest"
	"github.com/flowerhq/flower/testkit/testbed"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func open(t testing.TB) *Fleet {
	t.Helper()
	u := pgtest.URL(t)
	f, err := Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	// A second Open of the same database finds the migrations applied.
	f2, err := Open(context.Background(), u)
	if err != nil {
		t.Fatalf("second open: %v", err)
	}
	f2.Close()
	return f
}

func add(t *testing.T, f *Fleet, ask string) int64 {
	t.Helper()
	id, _, err := f.Add(context.Background(), FlowArgs{Ask: ask, Workspace: "/shared/ws"}, AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// running marks job id as running on worker since long ago, attempt n.
func running(t *testing.T, f *Fleet, id int64, worker string, n int) {
	t.Helper()
	if _, err := f.pool.Exec(context.Background(), `UPDATE river_job SET state = 'running', attempt = $3, attempted_at = now() - interval '10 hours',
		attempted_by = ARRAY[$2::text] WHERE id = $1`, id, worker, n); err != nil {
		t.Fatal(err)
	}
}

func leaseFor(t *testing.T, f *Fleet, worker string, expiresIn time.Duration) {
	t.Helper()
	if _, err := f.pool.Exec(context.Background(), `INSERT INTO flower_workers (id, host, pid, expires_at) VALUES ($1, 'h', 1, now() + $2::interval)
		ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at`, worker, interval(expiresIn)); err != nil {
		t.Fatal(err)
	}
}

func state(t *testing.T, f *Fleet, id int64) string {
	t.Helper()
	j, err := f.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j.State
}

// TestTakeOverOnlyExpiredLeases: a flow running for ten hours on a worker
// whose lease is live is never taken over; one whose worker's lease expired
// (or who has none) is made available, with an error naming the worker —
// cancelled instead when a cancel was asked for, discarded when its
// attempts are spent. Control: once the live lease expires, its flow is
// taken over too.
func TestTakeOverOnlyExpiredLeases(t *testing.T) {
	f := open(t)
	ctx := context.Background()
	live, dead, gone, cancelled, spent := add(t, f, "live"), add(t, f, "dead"), add(t, f, "gone"), add(t, f, "cancelled"), add(t, f, "spent")
	leaseFor(t, f, "w-live", time.Hour)
	leaseFor(t, f, "w-dead", -time.Second)
	running(t, f, live, "w-live", 1)
	running(t, f, dead, "w-dead", 1)
	running(t, f, gone, "w-never-leased", 1)
	running(t, f, cancelled, "w-dead", 1)
	running(t, f, spent, "w-dead", DefaultMaxAttempts)
	if _, err := f.pool.Exec(ctx, `UPDATE river_job SET metadata = metadata || '{"cancel_attempted_at":"2026-01-01T00:00:00Z"}' WHERE id = $1`, cancelled); err != nil {
		t.Fatal(err)
	}
	ids, err := takeOver(ctx, f.pool, "", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	if want := []int64{dead, gone, cancelled, spent}; !slices.Equal(ids, want) {
		t.Fatalf("taken over %v, want %v", ids, want)
	}
	for id, want := range map[int64]string{live: "running", dead: "available", gone: "available", cancelled: "cancelled", spent: "discarded"} {
		if got := state(t, f, id); got != want {
			t.Errorf("job %d: %s, want %s", id, got, want)
		}
	}
	if j, _ := f.Get(ctx, dead); len(j.Errors) != 1 || j.TakenOver != 1 {
		t.Errorf("the taken-over job's errors %q, takeovers %d", j.Errors, j.TakenOver)
	}
	if ids, _ := takeOver(ctx, f.pool, "", nil, 0); len(ids) != 0 {
		t.Errorf("a second pass took over %v", ids)
	}
	leaseFor(t, f, "w-live", -time.Second)
	if ids, _ := takeOver(ctx, f.pool, "", nil, 0); !slices.Equal(ids, []int64{live}) {
		t.Errorf("control: after its lease expired, taken over %v, want [%d]", ids, live)
	}
}

// TestLease: a lease renews while live; once it has expired, renew says
// so (the worker must fence itself). A second worker with a live lease's
// id is refused.
func TestLease(t *testing.T) {
	f := open(t)
	ctx := context.Background()
	l := &lease{pool: f.pool, id: "w1", ttl: time.Minute}
	if err := l.acquire(ctx, "h", 1); err != nil {
		t.Fatal(err)
	}
	if err := (&lease{pool: f.pool, id: "w1", ttl: time.Minute}).acquire(ctx, "h2", 2); err == nil {
		t.Error("a second worker took a live lease's id")
	}
	if ok, err := l.renew(ctx); err != nil || !ok {
		t.Fatalf("renew: %v %v", ok, err)
	}
	leaseFor(t, f, "w1", -time.Second)
	if ok, err := l.renew(ctx); err != nil || ok {
		t.Errorf("renew of an expired lease: ok %v, %v", ok, err)
	}
	if err := l.release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := (&lease{pool: f.pool, id: "w1", ttl: time.Minute}).acquire(ctx, "h2", 2); err != nil {
		t.Errorf("a released id: %v", err)
	}
}

// work runs a worker with runner until the returned stop is called.
func work(t testing.TB, f *Fleet, id string, rescueAfter, grace time.Duration, runner Runner) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		err := f.Work(ctx, WorkOptions{ID: id, RescueAfter: rescueAfter, Grace: grace, PollInterval: 100 * time.Millisecond, Runner: runner,
			Logf: func(format string, a ...any) {
				if _, bench := t.(*testing.B); !bench {
					t.Logf(format, a...)
				}
			}})
		if err != nil {
			t.Errorf("work %s: %v", id, err)
		}
		done <- err
	}()
	return func() {
		cancel()
		<-done
	}
}

// TestLiveLongFlowNotTakenOver: a flow that runs eight times --rescue-after
// on a live worker, with a second worker looking for flows to take over all
// along, ends on its first attempt, once.
func TestLiveLongFlowNotTakenOver(t *testing.T) {
	f := open(t)
	// Short leases are what is tested. At 1 s a CI-loaded machine (load ~8
	// on 2 cores) once missed both workers' renewals, the idle one's too:
	// 2 s leaves the renewal loop twice the slack and still runs the flow
	// through eight lease spans.
	const rescue = 2 * time.Second
	var runs atomic.Int32
	runner := func(ctx context.Context, r *FlowRun) (Outcome, error) {
		runs.Add(1)
		select {
		case <-time.After(8 * rescue):
		case <-ctx.Done():
			return Outcome{}, ctx.Err()
		}
		return Outcome{Verdict: "achieved"}, nil
	}
	stop1 := work(t, f, "w1", rescue, time.Minute, runner)
	id := add(t, f, "long")
	testbed.Await(t, "the flow's start", func() bool { return state(t, f, id) == "running" })
	stop2 := work(t, f, "w2", rescue, time.Minute, runner)
	testbed.Await(t, "the flow's end", func() bool { return state(t, f, id) == "completed" })
	stop1()
	stop2()
	j, _ := f.Get(context.Background(), id)
	if j.Attempt != 1 || len(j.Attempts) != 1 || j.Worker != "w1" || j.Verdict != "achieved" || runs.Load() != 1 || j.TakenOver != 0 {
		t.Fatalf("job %+v, runs %d", j, runs.Load())
	}
}

// TestOutcomes: a verdict completes the job whatever it is (not_yet,
// unreachable: not retried); an error is retried by River, recorded.
func TestOutcomes(t *testing.T) {
	f := open(t)
	runner := func(ctx context.Context, r *FlowRun) (Outcome, error) {
		switch r.Args.Ask {
		case "fails":
			return Outcome{}, errors.New("claude is gone")
		case "unreachable":
			return Outcome{Verdict: "unreachable", Run: "r1", Workspace: "/w"}, nil
		}
		return Outcome{Verdict: "not_yet"}, nil
	}
	stop := work(t, f, "w1", time.Minute, time.Minute, runner)
	notYet, unreachable, fails := add(t, f, "not yet"), add(t, f, "unreachable"), add(t, f, "fails")
	testbed.Await(t, "the outcomes", func() bool {
		return state(t, f, notYet) == "completed" && state(t, f, unreachable) == "completed" && state(t, f, fails) == "retryable"
	})
	stop()
	for id, want := range map[int64]string{notYet: "not_yet", unreachable: "unreachable"} {
		if j, _ := f.Get(context.Background(), id); j.Verdict != want || j.Attempt != 1 {
			t.Errorf("job %d: verdict %q attempt %d, want %q once", id, j.Verdict, j.Attempt, want)
		}
	}
	if j, _ := f.Get(context.Background(), unreachable); j.Run != "r1" || j.Workspace != "/w" {
		t.Errorf("the attempt's run and workspace: %+v", j)
	}
	if j, _ := f.Get(context.Background(), fails); len(j.Errors) == 0 || j.Errors[0] != "attempt 1: claude is gone" || j.Error != "claude is gone" {
		t.Errorf("the failed attempt: errors %q, error %q", j.Errors, j.Error)
	}
}

// TestGracefulStop: on stop a flow that ends within the grace period
// completes; one that does not is handed back at the end of it (available
// at once, no attempt spent) and the next worker's run of it is attempt 1
// again.
func TestGracefulStop(t *testing.T) {
	f := open(t)
	started, stopping := make(chan string, 2), make(chan struct{})
	runner := func(ctx context.Context, r *FlowRun) (Outcome, error) {
		started <- r.Args.Ask
		if r.Args.Ask == "quick" {
			<-stopping // ends once the stop has begun, within the grace period
			return Outcome{Verdict: "achieved"}, nil
		}
		<-ctx.Done()
		return Outcome{}, ctx.Err()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- f.Work(ctx, WorkOptions{ID: "w1", Concurrency: 2, Grace: 300 * time.Millisecond, PollInterval: 100 * time.Millisecond, Runner: runner})
	}()
	quick, slow := add(t, f, "quick"), add(t, f, "slow")
	<-started
	<-started
	cancel()
	close(stopping)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := state(t, f, quick); got != "completed" {
		t.Errorf("the quick flow: %s", got)
	}
	j, _ := f.Get(context.Background(), slow)
	if j.State != "available" || j.Attempt != 0 {
		t.Errorf("the slow flow after the grace period: %s, attempt %d (want available, attempt 0)", j.State, j.Attempt)
	}
}

// TestLostLeaseStopsFlowsWorkerGoesOn: a worker whose lease expired
// behind its back (a database it could not reach, say) stops its flow
// (an attempt spent, retried), rather than run on while another worker
// may take it over; it does not end: it takes the flow again. Control: the same worker
// with its lease left alone is still running its flow.
func TestLostLeaseStopsFlowsWorkerGoesOn(t *testing.T) {
	f := open(t)
	stopped := make(chan struct{})
	var runs atomic.Int32
	runner := func(ctx context.Context, r *FlowRun) (Outcome, error) {
		if runs.Add(1) > 1 {
			return Outcome{Verdict: "achieved"}, nil
		}
		<-ctx.Done()
		close(stopped)
		return Outcome{}, ctx.Err()
	}
	stop := work(t, f, "w1", time.Second, time.Minute, runner) // a lease a loaded machine renews in time
	defer stop()
	id := add(t, f, "fenced")
	testbed.Await(t, "the flow's start", func() bool { return state(t, f, id) == "running" })
	// Several renewals (each moves the lease's end) pass with the flow running.
	leaseEnds := map[time.Time]bool{}
	testbed.Await(t, "three renewals of w1's lease", func() bool {
		var end time.Time
		if err := f.pool.QueryRow(context.Background(), "SELECT expires_at FROM flower_workers WHERE id = 'w1'").Scan(&end); err == nil {
			leaseEnds[end] = true
		}
		return len(leaseEnds) > 3
	})
	select {
	case <-stopped:
		t.Fatal("control: the flow stopped although the lease was renewed")
	default:
	}
	if _, err := f.pool.Exec(context.Background(), "UPDATE flower_workers SET expires_at = now() - interval '1 hour' WHERE id = 'w1'"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the flow ran on after its worker lost the lease")
	}
	testbed.Await(t, "the flow taken again by the same worker", func() bool { return state(t, f, id) == "completed" })
	if j, _ := f.Get(context.Background(), id); j.Verdict != "achieved" || j.Worker != "w1" || runs.Load() != 2 {
		t.Errorf("after the lost lease: %+v, runs %d", j, runs.Load())
	}
}
