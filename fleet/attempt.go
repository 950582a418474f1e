package fleet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// WaitError is a Runner's word that the flow cannot run yet (its workspace
// is busy with another flow): the job is snoozed for After, no attempt
// spent, and Reason is shown by `flower queue ls` meanwhile.
type WaitError struct {
	Reason string
	After  time.Duration
}

func (e *WaitError) Error() string { return "waiting: " + e.Reason }

// PermanentError is a failure no retry can mend (the workspace does not
// exist): the job is cancelled at once with its reason.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent marks err as permanent.
func Permanent(err error) error { return &PermanentError{Err: err} }

// recordEvery bounds the backoff between tries of an attempt's record.
const recordEvery = 5 * time.Second

func (w *flowWorker) Work(ctx context.Context, job *river.Job[FlowArgs]) error {
	db := context.WithoutCancel(ctx)
	// Known to the holder from the start: the sweep of jobs this worker
	// lost track of (maintain) never takes one it is claiming.
	fctx, done := w.h.run(ctx, job.ID)
	defer done()
	tok, ok, err := w.claim(ctx, job)
	if err != nil || !ok {
		w.o.Logf("worker %s: job %d attempt %d: not this worker's to run (%v)", w.o.ID, job.ID, job.Attempt, err)
		return fmt.Errorf("claiming the flow: not this worker's (%v)", err)
	}
	// From here on every change River makes for this attempt carries the
	// token (the trigger refuses one that does not).
	river.RecordOutput(ctx, recorded{Fence: tok})
	if !w.h.live() || w.h.down.Load() {
		// The lease is being renewed, or the database came back before
		// keepLease renewed it: a flow started now could be stopped at
		// once by a deadline that passed in the outage (and claude named
		// a session it never wrote). Try again once the lease is sure.
		return river.JobSnooze(time.Second)
	}
	run := &FlowRun{JobID: job.ID, Attempt: job.Attempt, Worker: w.o.ID, Args: job.Args, Flow: flowName(job.ID), fence: storeFence(job.ID, tok),
		outbox: storeOutbox(w.o, job.ID, tok)}
	if err := w.record(db, job, tok, `INSERT INTO flower_flow_attempts (job_id, attempt, worker, epoch) VALUES ($1, $2, $3, $4)
		ON CONFLICT (job_id, attempt, worker) DO UPDATE SET run = '', workspace = '', verdict = '', error = '', cost_usd = 0,
		epoch = excluded.epoch, started_at = now(), ended_at = NULL`, job.ID, job.Attempt, w.o.ID, tok.Epoch); err != nil {
		return w.end(ctx, job, tok, Outcome{}, fmt.Errorf("recording the attempt: %w", err))
	}
	run.started = func(r, ws string) {
		if err := w.record(db, job, tok, "UPDATE flower_flow_attempts SET run = $4, workspace = $5 WHERE job_id = $1 AND attempt = $2 AND worker = $3",
			job.ID, job.Attempt, w.o.ID, r, ws); err != nil {
			w.o.Logf("worker %s: job %d: %v", w.o.ID, job.ID, err)
		}
	}
	w.o.Logf("worker %s: job %d attempt %d (token %d): %s", w.o.ID, job.ID, job.Attempt, tok.Epoch, clip(job.Args.Ask, 60))
	out, err := w.o.Runner(fctx, run)
	if err == nil && fctx.Err() != nil {
		err = context.Cause(fctx)
	}
	return w.end(fctx, job, tok, out, err)
}

// claim takes the job's fencing token, trying again while the database
// cannot be reached and the lease holds.
func (w *flowWorker) claim(ctx context.Context, job *river.Job[FlowArgs]) (token, bool, error) {
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, recordEvery) {
		tok, ok, err := claim(ctx, w.f.pool, job, w.o.ID)
		if err == nil || !w.h.live() || ctx.Err() != nil {
			return tok, ok, err
		}
		time.Sleep(wait)
	}
}

// record runs one of the attempt's writes of flower_flow_attempts under
// its token, trying again with backoff while the database cannot be
// reached, for up to the lease's length (RescueAfter). A stale token is
// refused at once.
func (w *flowWorker) record(ctx context.Context, job *river.Job[FlowArgs], tok token, sql string, args ...any) error {
	return w.recordTx(ctx, job, tok, func(tx pgx.Tx) error { _, err := tx.Exec(ctx, sql, args...); return err })
}

// recordTx is record of any writes do makes in the fenced transaction.
func (w *flowWorker) recordTx(ctx context.Context, job *river.Job[FlowArgs], tok token, do func(pgx.Tx) error) error {
	end := time.Now().Add(w.o.RescueAfter)
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, recordEvery) {
		err := fenced(ctx, w.f.pool, job.ID, tok, do)
		if err == nil || errors.Is(err, ErrStale) || time.Now().After(end) {
			return err
		}
		time.Sleep(wait)
	}
}

// end records how the attempt ended and returns River's word for it: a
// verdict completes the job; a cancel cancels it; a permanent error
// cancels it with its reason; a wait snoozes it; the grace period over
// hands it back; the lease lost and any other error are retried. A stale
// attempt (taken over) records nothing and changes nothing: the trigger
// refuses River's change, and it is said here.
func (w *flowWorker) end(ctx context.Context, job *river.Job[FlowArgs], tok token, out Outcome, err error) error {
	db := context.WithoutCancel(ctx)
	cause := context.Cause(ctx)
	var wait *WaitError
	var perm *PermanentError
	switch {
	case errors.Is(cause, river.ErrJobCancelledRemotely):
		err, out.Error = river.JobCancel(errors.New("cancelled (flower queue cancel)")), "cancelled (flower queue cancel)"
	case errors.Is(cause, errLeaseRanOut) || errors.Is(cause, errLeaseLost):
		out.Verdict, out.Error = "", "stopped: "+cause.Error() // not the flow's "run the same command again"
	case errors.As(err, &wait):
		out.Error = ""
	case err != nil && out.Error == "":
		out.Error = err.Error()
	}
	if errors.As(err, &wait) {
		// No attempt spent: drop its row, say why it waits.
		rerr := w.record(db, job, tok, "DELETE FROM flower_flow_attempts WHERE job_id = $1 AND attempt = $2 AND worker = $3", job.ID, job.Attempt, w.o.ID)
		if errors.Is(rerr, ErrStale) {
			return w.stale(job, tok)
		}
		river.RecordOutput(ctx, recorded{Note: wait.Reason, Fence: tok})
		w.o.Logf("worker %s: job %d waits: %s", w.o.ID, job.ID, wait.Reason)
		return river.JobSnooze(wait.After)
	}
	river.RecordOutput(ctx, recorded{Outcome: out, Fence: tok})
	// A verdict completes the job in the same fenced transaction as the
	// attempt's end (River's completer then finds it done), retried while
	// the database is away: River's own completer gives up after three
	// tries.
	completes := err == nil && ctx.Err() == nil
	rerr := w.recordTx(db, job, tok, func(tx pgx.Tx) error {
		if _, err := tx.Exec(db, endSQL, job.ID, job.Attempt, w.o.ID, out.Run, out.Workspace, out.Verdict, out.Error, out.CostUSD); err != nil {
			return err
		}
		if completes {
			_, err := river.JobCompleteTx[*riverpgxv5.Driver](db, tx, job)
			return err
		}
		return nil
	})
	if errors.Is(rerr, ErrStale) {
		return w.stale(job, tok)
	}
	if rerr != nil && w.o.SpoolDir != "" {
		p, err := spool(w.o.SpoolDir, spooled{JobID: job.ID, Attempt: job.Attempt, Worker: w.o.ID, Fence: tok, Outcome: out, Complete: completes})
		w.o.Logf("worker %s: job %d: recording its end: %v; spooled to %s (%v), replayed when a worker starts here", w.o.ID, job.ID, rerr, p, err)
	} else if rerr != nil {
		w.o.Logf("worker %s: job %d: recording its end: %v", w.o.ID, job.ID, rerr)
	}
	switch {
	case errors.Is(cause, errLeaseRanOut) || errors.Is(cause, errLeaseLost):
		// An attempt spent, not a hand-back: its record stays its own (a
		// hand-back's next run on this worker would reuse its number and
		// row), and River retries the flow, resuming it, as an
		// infrastructure failure.
		w.o.Logf("worker %s: job %d attempt %d stopped, retried: %v", w.o.ID, job.ID, job.Attempt, cause)
		return fmt.Errorf("flow stopped: %w", cause)
	case ctx.Err() != nil && w.handBack.Load():
		w.o.Logf("worker %s: job %d handed back (grace period over)", w.o.ID, job.ID)
		return river.JobSnooze(0)
	case errors.As(err, &perm):
		w.o.Logf("worker %s: job %d cannot run: %v", w.o.ID, job.ID, err)
		return river.JobCancel(err)
	case ctx.Err() != nil && !errors.Is(cause, river.ErrJobCancelledRemotely):
		w.o.Logf("worker %s: job %d stopped: %v", w.o.ID, job.ID, cause)
		return fmt.Errorf("flow stopped: %w", cause)
	case err != nil:
		w.o.Logf("worker %s: job %d attempt %d ended: %v", w.o.ID, job.ID, job.Attempt, err)
		return err
	}
	w.o.Logf("worker %s: job %d: %s ($%.4f)", w.o.ID, job.ID, cmpOr(out.Verdict, "done"), out.CostUSD)
	return nil
}

// stale says that the attempt was taken over: nothing of it is recorded
// and River's change of the job will be refused.
func (w *flowWorker) stale(job *river.Job[FlowArgs], tok token) error {
	w.o.Logf("worker %s: job %d attempt %d: taken over by another worker (token %d is stale); its end is not recorded and the job is left to its new holder",
		w.o.ID, job.ID, job.Attempt, tok.Epoch)
	return ErrStale
}
