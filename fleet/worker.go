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
)

// rescueNever is River's RescueStuckJobsAfter for flow jobs: a century, so
// River's rescuer, which sees only attempted_at, never takes a flow from a
// live worker; the lease decides (see the package doc).
const rescueNever = 100 * 365 * 24 * time.Hour

// Defaults of WorkOptions.
const (
	DefaultRescueAfter = 10 * time.Minute
	DefaultGrace       = 5 * time.Minute
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
}

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
	// KeepFinished: how long finished flows stay in the queue's records
	// before the leader's cleaner deletes them (default DefaultKeepFinished;
	// negative keeps them forever).
	KeepFinished time.Duration
	Runner       Runner
	Logf         func(format string, args ...any)
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
// once every flow it took has finished or been handed back.
func (f *Fleet) Work(ctx context.Context, o WorkOptions) error {
	if err := o.fill(); err != nil {
		return err
	}
	host, _ := os.Hostname()
	l := &lease{pool: f.pool, id: o.ID, ttl: o.RescueAfter}
	if err := l.acquire(ctx, host, os.Getpid()); err != nil {
		return err
	}
	fw := &flowWorker{f: f, o: o}
	workers := river.NewWorkers()
	river.AddWorker(workers, river.Worker[FlowArgs](fw))
	client, err := river.NewClient(riverpgxv5.New(f.pool), &river.Config{
		ID: o.ID, Queues: map[string]river.QueueConfig{o.Queue: {MaxWorkers: o.Concurrency}}, Workers: workers,
		JobTimeout: -1, RescueStuckJobsAfter: rescueNever, FetchPollInterval: o.PollInterval,
		CompletedJobRetentionPeriod: o.KeepFinished, CancelledJobRetentionPeriod: o.KeepFinished, DiscardedJobRetentionPeriod: o.KeepFinished,
		Logger: slog.New(slog.NewTextHandler(logWriter(o.Logf), &slog.HandlerOptions{Level: slog.LevelError})),
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
	fenced := make(chan struct{})
	leaseDone := make(chan struct{})
	go func() { defer close(leaseDone); f.keepLease(leaseCtx, l, o, fenced) }()
	select {
	case <-ctx.Done():
		o.Logf("worker %s: stopping; running flows have %s to finish, then they are handed back", o.ID, o.Grace)
	case <-fenced:
	}
	f.stop(client, fw, o, fenced)
	stopLease()
	<-leaseDone
	if err := l.release(context.WithoutCancel(ctx)); err != nil {
		o.Logf("worker %s: releasing the lease: %v", o.ID, err)
	}
	o.Logf("worker %s: stopped", o.ID)
	return nil
}

// stop ends the client: Stop for the grace period, then StopAndCancel with
// the flows handed back. A fenced worker (its lease lost) hands them back at
// once: whoever may take them over starts from the store, not from a flow
// this worker is still changing.
func (f *Fleet) stop(client *river.Client[pgx.Tx], fw *flowWorker, o WorkOptions, fenced chan struct{}) {
	grace := o.Grace
	select {
	case <-fenced:
		grace = 0
		fw.handBack.Store(true)
	default:
	}
	if grace > 0 {
		sctx, cancel := context.WithTimeout(context.Background(), grace)
		err := client.Stop(sctx)
		cancel()
		if err == nil {
			return
		}
		fw.handBack.Store(true)
		o.Logf("worker %s: grace period over; handing back the running flows", o.ID)
	}
	hctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := client.StopAndCancel(hctx); err != nil {
		o.Logf("worker %s: stop: %v", o.ID, err)
	}
}

// keepLease renews the lease and takes over dead workers' flows every
// LeaseEvery(RescueAfter). When the lease could not be renewed in time it
// closes fenced: this worker's flows may be someone else's now.
func (f *Fleet) keepLease(ctx context.Context, l *lease, o WorkOptions, fenced chan struct{}) {
	t := time.NewTicker(LeaseEvery(o.RescueAfter))
	defer t.Stop()
	lastOK := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// Each call is bounded: a renewal hung on a dead connection must not
		// keep the worker from noticing that its lease runs out.
		rctx, cancel := context.WithTimeout(ctx, LeaseEvery(o.RescueAfter))
		ok, err := l.renew(rctx)
		cancel()
		switch {
		case err == nil && ok:
			lastOK = time.Now()
		case err == nil || time.Since(lastOK) >= o.RescueAfter-LeaseEvery(o.RescueAfter):
			o.Logf("worker %s: lost its lease (%v); cancelling its flows", o.ID, err)
			close(fenced)
			return
		default:
			o.Logf("worker %s: renewing the lease: %v", o.ID, err)
		}
		tctx, cancel := context.WithTimeout(ctx, LeaseEvery(o.RescueAfter))
		ids, err := takeOver(tctx, f.pool)
		cancel()
		if err != nil && ctx.Err() == nil {
			o.Logf("worker %s: looking for flows to take over: %v", o.ID, err)
		}
		for _, id := range ids {
			o.Logf("worker %s: job %d's worker stopped renewing its lease; the flow is available again", o.ID, id)
		}
		fctx, cancel := context.WithTimeout(ctx, LeaseEvery(o.RescueAfter))
		err = forgetOrphans(fctx, f.pool)
		cancel()
		if err != nil && ctx.Err() == nil {
			o.Logf("worker %s: deleting the attempts of deleted flows: %v", o.ID, err)
		}
	}
}

// forgetOrphans deletes the attempt rows of flows River's cleaner deleted
// (after KeepFinished): they would otherwise outlive their flows forever.
// Job ids are never reused, and an attempt row is written only while its
// job exists.
func forgetOrphans(ctx context.Context, pool *pgxpool.Pool) error {
	_, err := pool.Exec(ctx, `DELETE FROM flower_flow_attempts a WHERE NOT EXISTS (SELECT 1 FROM river_job j WHERE j.id = a.job_id)`)
	return err
}

// flowWorker is River's worker of flow jobs.
type flowWorker struct {
	river.WorkerDefaults[FlowArgs]
	f        *Fleet
	o        WorkOptions
	handBack atomic.Bool // set when the grace period is over
}

// Timeout: a flow has no time limit of River's (its rounds and budget bound
// it); -1 is River's "none".
func (w *flowWorker) Timeout(*river.Job[FlowArgs]) time.Duration { return -1 }

func (w *flowWorker) Work(ctx context.Context, job *river.Job[FlowArgs]) error {
	run := &FlowRun{JobID: job.ID, Attempt: job.Attempt, Worker: w.o.ID, Args: job.Args, Flow: FlowName(job.ID)}
	db := context.WithoutCancel(ctx)
	if _, err := w.f.pool.Exec(db, `INSERT INTO flower_flow_attempts (job_id, attempt, worker) VALUES ($1, $2, $3)
		ON CONFLICT (job_id, attempt, worker) DO UPDATE SET run = '', workspace = '', verdict = '', error = '', cost_usd = 0,
		started_at = now(), ended_at = NULL`, job.ID, job.Attempt, w.o.ID); err != nil {
		return fmt.Errorf("recording the attempt: %w", err)
	}
	run.started = func(r, ws string) {
		if _, err := w.f.pool.Exec(db, "UPDATE flower_flow_attempts SET run = $4, workspace = $5 WHERE job_id = $1 AND attempt = $2 AND worker = $3",
			job.ID, job.Attempt, w.o.ID, r, ws); err != nil {
			w.o.Logf("worker %s: job %d: %v", w.o.ID, job.ID, err)
		}
	}
	w.o.Logf("worker %s: job %d attempt %d: %s", w.o.ID, job.ID, job.Attempt, clip(job.Args.Ask, 60))
	out, err := w.o.Runner(ctx, run)
	if err != nil && out.Error == "" {
		out.Error = err.Error()
	}
	if _, dbErr := w.f.pool.Exec(db, `UPDATE flower_flow_attempts SET run = coalesce(nullif($4, ''), run), workspace = coalesce(nullif($5, ''), workspace),
		verdict = $6, error = $7, cost_usd = $8, ended_at = now() WHERE job_id = $1 AND attempt = $2 AND worker = $3`,
		job.ID, job.Attempt, w.o.ID, out.Run, out.Workspace, out.Verdict, out.Error, out.CostUSD); dbErr != nil {
		w.o.Logf("worker %s: job %d: %v", w.o.ID, job.ID, dbErr)
	}
	switch {
	case ctx.Err() != nil && w.handBack.Load():
		w.o.Logf("worker %s: job %d handed back", w.o.ID, job.ID)
		return river.JobSnooze(0)
	case ctx.Err() != nil:
		w.o.Logf("worker %s: job %d stopped: %v", w.o.ID, job.ID, context.Cause(ctx))
		return fmt.Errorf("flow stopped: %w", context.Cause(ctx))
	case err != nil:
		w.o.Logf("worker %s: job %d attempt %d failed (retried): %v", w.o.ID, job.ID, job.Attempt, err)
		return err
	}
	w.o.Logf("worker %s: job %d: %s ($%.4f)", w.o.ID, job.ID, cmpOr(out.Verdict, "done"), out.CostUSD)
	return river.RecordOutput(ctx, out)
}

// FlowName is the name a job's documents have in the session store.
func FlowName(jobID int64) string { return fmt.Sprintf("job-%d", jobID) }

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
