package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/flowerhq/flower/sessionstore"
)

// rescueNever is River's RescueStuckJobsAfter for flow jobs: a century, so
// River's rescuer, which sees only attempted_at, never takes a flow from a
// live worker; the lease decides (see the package doc).
const rescueNever = 100 * 365 * 24 * time.Hour

// Defaults of WorkOptions.
const (
	// DefaultFetchCooldown is River's least time between two fetches of a
	// worker: River's default (100 ms) makes a burst of flows wait in line
	// behind it (a fetch per finished flow at most every 100 ms per
	// worker); a flow runs for minutes, so fetching sooner costs nothing
	// (BenchmarkQueueLatency).
	DefaultFetchCooldown = 5 * time.Millisecond
	DefaultRescueAfter   = 10 * time.Minute
	DefaultGrace         = 5 * time.Minute
	// DefaultKeepFinished is how long a finished flow (achieved, not
	// achieved, cancelled, failed) stays listed: River's own default
	// forgets a completed job after 24 hours, before a team back from a
	// weekend has read what its flows did.
	DefaultKeepFinished = 30 * 24 * time.Hour
)

// Runner runs one attempt of a queued flow. Its outcome is the job's: a
// verdict (achieved, not_yet, unreachable, budget) completes the job; an
// error is an infrastructure failure, which River retries. It must return
// soon after ctx ends (the flow interrupted, resumable).
type Runner func(ctx context.Context, r *FlowRun) (Outcome, error)

// FlowRun is one attempt of a flow job, as a Runner gets it.
type FlowRun struct {
	JobID   int64
	Attempt int
	Worker  string
	Args    FlowArgs
	// Flow names the flow's documents in the session store.
	Flow    string
	started func(run, workspace string)
	fence   sessionstore.FenceFunc
	outbox  sessionstore.OutboxOptions
}

// StoreFence is the attempt's fence for its session store
// (sessionstore.Store.SetFence): the run, documents and sessions it writes
// are refused once the flow was taken over.
func (r *FlowRun) StoreFence() sessionstore.FenceFunc { return r.fence }

// StoreOutbox is the attempt's outbox for its session store
// (sessionstore.Store.SetOutbox): what it writes while the database is
// away is kept and tried again for the lease's length, then spooled under
// the worker's spool folder with the attempt's token, and made (under that
// token) when a worker starts or reconnects there.
func (r *FlowRun) StoreOutbox() sessionstore.OutboxOptions { return r.outbox }

// Started records where the attempt runs, for `flower queue ls`, once the
// Runner knows its run id and workspace.
func (r *FlowRun) Started(run, workspace string) {
	if r.started != nil {
		r.started(run, workspace)
	}
}

// Outcome is how one attempt ended.
type Outcome struct {
	Verdict   string  `json:"verdict"`
	Run       string  `json:"run"`
	Workspace string  `json:"workspace"`
	Error     string  `json:"error"`
	CostUSD   float64 `json:"cost_usd"`
}

// WorkOptions configure Work.
type WorkOptions struct {
	ID          string // the worker's name (default host-pid)
	Queue       string // default DefaultQueue
	Concurrency int    // flows at once (default 1)
	// RescueAfter: how long after this worker stops renewing its lease
	// another worker may take its flows (default DefaultRescueAfter).
	RescueAfter time.Duration
	// Grace: how long a stopping worker lets its flows run before it hands
	// them back (default DefaultGrace).
	Grace time.Duration
	// PollInterval: how often River looks for jobs it was not told about
	// (default 1 s).
	PollInterval time.Duration
	// FetchCooldown: the least time between two fetches of River's
	// (default DefaultFetchCooldown).
	FetchCooldown time.Duration
	// KeepFinished: how long finished flows stay in the queue's records
	// before the leader's cleaner deletes them (default DefaultKeepFinished;
	// negative keeps them forever).
	KeepFinished time.Duration
	// DeadlineFile, when set, is kept holding the lease's local deadline
	// (child.DeadlineEnv): the flows' supervisors kill their claude when
	// it passes unrenewed.
	DeadlineFile string
	// SpoolDir, when set, keeps the end records of attempts that could not
	// reach the database within RescueAfter (private files), replayed
	// under their tokens when a worker starts with the same SpoolDir.
	SpoolDir string
	Runner   Runner
	Logf     func(format string, args ...any)
	// frozen, in tests, skips the lease's renewals while it returns true
	// (a stopped worker).
	frozen func() bool
}

func (o *WorkOptions) fill() error {
	if o.Runner == nil {
		return errors.New("fleet: work: no Runner")
	}
	host, _ := os.Hostname()
	o.ID = cmpOr(o.ID, fmt.Sprintf("%s-%d", host, os.Getpid()))
	o.Queue = cmpOr(o.Queue, DefaultQueue)
	o.Concurrency = max(o.Concurrency, 1)
	if o.RescueAfter <= 0 {
		o.RescueAfter = DefaultRescueAfter
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	switch {
	case o.KeepFinished == 0:
		o.KeepFinished = DefaultKeepFinished
	case o.KeepFinished < 0:
		o.KeepFinished = -1 // River: never delete
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	if o.FetchCooldown <= 0 {
		o.FetchCooldown = DefaultFetchCooldown
	}
	o.FetchCooldown = min(o.FetchCooldown, o.PollInterval)
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return nil
}

func cmpOr(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// Work runs a worker until ctx ends, then stops gracefully: no new flows,
// running ones get o.Grace to finish, the rest are handed back. It returns
// once every flow it took has finished or been handed back. A lost lease
// or an unreachable database never ends it: it stops the flows it may no
// longer hold, keeps trying and takes flows again once the database is back.
func (f *Fleet) Work(ctx context.Context, o WorkOptions) error {
	if err := o.fill(); err != nil {
		return err
	}
	host, _ := os.Hostname()
	l := &lease{pool: f.pool, id: o.ID, ttl: o.RescueAfter}
	sent := time.Now()
	if err := l.acquire(ctx, host, os.Getpid()); err != nil {
		return err
	}
	h := newHolder(o.RescueAfter, o.DeadlineFile, o.Logf)
	defer h.close()
	h.renewed(sent)
	f.replaySpools(ctx, o)
	fw := &flowWorker{f: f, o: o, h: h}
	workers := river.NewWorkers()
	river.AddWorker(workers, river.Worker[FlowArgs](fw))
	client, err := river.NewClient(riverpgxv5.New(f.pool), &river.Config{
		ID: o.ID, Queues: map[string]river.QueueConfig{o.Queue: {MaxWorkers: o.Concurrency}}, Workers: workers,
		JobTimeout: -1, RescueStuckJobsAfter: rescueNever, FetchPollInterval: o.PollInterval, FetchCooldown: o.FetchCooldown,
		CompletedJobRetentionPeriod: o.KeepFinished, CancelledJobRetentionPeriod: o.KeepFinished, DiscardedJobRetentionPeriod: o.KeepFinished,
		Logger: slog.New(slog.NewTextHandler(logWriter(func(format string, a ...any) {
			if !h.down.Load() { // an outage is said once a minute by keepLease, not by each of River's tries
				o.Logf(format, a...)
			}
		}), &slog.HandlerOptions{Level: slog.LevelError})),
	})
	if err != nil {
		return fmt.Errorf("worker %s: %w", o.ID, err)
	}
	// Not ctx: its end is a soft stop, not a hard one.
	if err := client.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("worker %s: %w", o.ID, err)
	}
	o.Logf("worker %s: taking flows from queue %s of %s (%d at once; rescue after %s)", o.ID, o.Queue, f.shown, o.Concurrency, o.RescueAfter)
	leaseCtx, stopLease := context.WithCancel(context.WithoutCancel(ctx))
	leaseDone := make(chan struct{})
	go func() { defer close(leaseDone); f.keepLease(leaseCtx, l, o, h) }()
	<-ctx.Done()
	o.Logf("worker %s: stopping; running flows have %s to finish, then they are handed back", o.ID, o.Grace)
	f.stop(client, fw, o)
	stopLease()
	<-leaseDone
	if err := l.release(context.WithoutCancel(ctx)); err != nil {
		o.Logf("worker %s: releasing the lease: %v", o.ID, err)
	}
	o.Logf("worker %s: stopped", o.ID)
	return nil
}

// stop ends the client: Stop for the grace period, then StopAndCancel with
// the flows handed back.
func (f *Fleet) stop(client *river.Client[pgx.Tx], fw *flowWorker, o WorkOptions) {
	sctx, cancel := context.WithTimeout(context.Background(), o.Grace)
	err := client.Stop(sctx)
	cancel()
	if err == nil {
		return
	}
	fw.handBack.Store(true)
	o.Logf("worker %s: grace period over; handing back the running flows", o.ID)
	hctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := client.StopAndCancel(hctx); err != nil {
		o.Logf("worker %s: stop: %v", o.ID, err)
	}
}

// unreachableEvery is how often a worker that cannot reach its database
// says so.
const unreachableEvery = time.Minute

// keepLease renews the lease and takes over dead workers' flows every
// leaseEvery(RescueAfter). A renewal that finds the lease expired stops
// this worker's flows (they may be someone else's now); one that fails
// leaves the local deadline where it was (h stops the flows when it
// passes) and is said once a minute.
func (f *Fleet) keepLease(ctx context.Context, l *lease, o WorkOptions, h *holder) {
	every := leaseEvery(o.RescueAfter)
	t := time.NewTicker(every)
	defer t.Stop()
	var down, said, back time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if o.frozen != nil && o.frozen() {
			continue
		}
		// Each call is bounded: a renewal hung on a dead connection must not
		// keep the worker from trying again.
		sent := time.Now()
		rctx, cancel := context.WithTimeout(ctx, every)
		ok, err := l.renew(rctx)
		if errors.Is(err, pgx.ErrNoRows) { // the row is gone: take the id again
			host, _ := os.Hostname()
			ok, err = false, l.acquire(rctx, host, os.Getpid())
		}
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if down.IsZero() {
				down = sent
				h.down.Store(true)
			}
			if said.IsZero() || time.Since(said) >= unreachableEvery {
				o.Logf("worker %s: cannot reach the database since %s (%v); its flows stop at the lease deadline, and it keeps trying",
					o.ID, down.Format(time.TimeOnly), err)
				said = time.Now()
			}
			continue
		}
		h.renewed(sent)
		if !down.IsZero() {
			h.down.Store(false)
			o.Logf("worker %s: the database is back after %s", o.ID, time.Since(down).Round(time.Second))
			down, said, back = time.Time{}, time.Time{}, time.Now()
			// What this worker kept while it was away goes in now, under
			// its tokens, before anyone may take its flows over.
			f.replaySpools(ctx, o)
		}
		if !ok {
			o.Logf("worker %s: its lease had expired; stopping its flows (they may be taken over) and taking flows again", o.ID)
			h.stopAll(errLeaseLost)
		}
		f.maintain(ctx, o, every, h, back.IsZero() || time.Since(back) >= o.RescueAfter)
	}
}

// maintain takes over dead workers' flows (with others false, only this
// worker's own lost ones) and forgets deleted flows' attempts.
func (f *Fleet) maintain(ctx context.Context, o WorkOptions, every time.Duration, h *holder, others bool) {
	tctx, cancel := context.WithTimeout(ctx, every)
	ids, err := takeOverIf(tctx, f.pool, o.ID, h.running(), o.RescueAfter, others)
	cancel()
	if err != nil && ctx.Err() == nil {
		o.Logf("worker %s: looking for flows to take over: %v", o.ID, err)
	}
	for _, id := range ids {
		o.Logf("worker %s: job %d's worker stopped renewing its lease; the flow is available again", o.ID, id)
	}
	fctx, cancel := context.WithTimeout(ctx, every)
	err = forgetOrphans(fctx, f.pool)
	cancel()
	if err != nil && ctx.Err() == nil {
		o.Logf("worker %s: deleting the attempts of deleted flows: %v", o.ID, err)
	}
}

// forgetOrphans deletes the attempt rows and fences of flows River's
// cleaner deleted (after KeepFinished): they would otherwise outlive their
// flows forever. Job ids are never reused, and an attempt row is written
// only while its job exists.
func forgetOrphans(ctx context.Context, pool *pgxpool.Pool) error {
	_, err := pool.Exec(ctx, `DELETE FROM flower_flow_attempts a WHERE NOT EXISTS (SELECT 1 FROM river_job j WHERE j.id = a.job_id);
		DELETE FROM flower_fences f WHERE NOT EXISTS (SELECT 1 FROM river_job j WHERE j.id = f.job_id)`)
	return err
}

// flowWorker is River's worker of flow jobs.
type flowWorker struct {
	river.WorkerDefaults[FlowArgs]
	f        *Fleet
	o        WorkOptions
	h        *holder
	handBack atomic.Bool // set when the grace period is over
}

// Timeout: a flow has no time limit of River's (its rounds and budget bound
// it); -1 is River's "none".
func (w *flowWorker) Timeout(*river.Job[FlowArgs]) time.Duration { return -1 }

// flowName is the name a job's documents have in the session store.
func flowName(jobID int64) string { return fmt.Sprintf("job-%d", jobID) }

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// logWriter passes River's error lines to Logf.
type logWriter func(format string, args ...any)

func (w logWriter) Write(p []byte) (int, error) {
	w("river: %s", strings.TrimSpace(string(p)))
	return len(p), nil
}
