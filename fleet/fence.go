package fleet

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/flowerhq/flower/sessionstore"
)

// fenceSchema is the fencing of flow jobs (see the package doc): each job's
// current token (flower_fences.epoch, bumped when an attempt starts and
// when a flow is taken over), the takeover margin of each worker, the token
// of each attempt row, and a trigger that refuses a worker's change of a
// running flow job's state (River's completion, retry, snooze, cancel),
// and any change of a flow job's recorded output, unless the change
// carries the current token. The second half matters after an outage: a
// stopped worker's River completer, back online, merges its attempt's
// output into the job even once another attempt finished it (River
// applies metadata merges whatever the job's state), which would put the
// stale attempt's outcome over the one that completed the flow. A refused
// change leaves the row as it was. Idempotent.
const fenceSchema = `
CREATE TABLE IF NOT EXISTS flower_fences (
    job_id  bigint  PRIMARY KEY,
    epoch   bigint  NOT NULL,
    worker  text    NOT NULL DEFAULT '',
    attempt integer NOT NULL DEFAULT 0
);
ALTER TABLE flower_workers ADD COLUMN IF NOT EXISTS margin_ms bigint NOT NULL DEFAULT 0;
ALTER TABLE flower_flow_attempts ADD COLUMN IF NOT EXISTS epoch bigint NOT NULL DEFAULT 0;
CREATE OR REPLACE FUNCTION flower_fence_job() RETURNS trigger LANGUAGE plpgsql AS $fence$
DECLARE cur bigint;
BEGIN
    IF current_setting('flower.takeover', true) = 'on' THEN
        RETURN NEW;
    END IF;
    SELECT epoch INTO cur FROM flower_fences WHERE job_id = OLD.id;
    IF cur IS NULL OR (NEW.metadata->'output'->'fence'->>'epoch')::bigint IS NOT DISTINCT FROM cur THEN
        RETURN NEW;
    END IF;
    RAISE WARNING 'flower: a stale change of job % refused (its token is %, the change carries %)', OLD.id, cur,
        coalesce(NEW.metadata->'output'->'fence'->>'epoch', 'none');
    RETURN OLD;
END
$fence$;
CREATE OR REPLACE TRIGGER flower_fence BEFORE UPDATE ON river_job FOR EACH ROW
    WHEN (OLD.kind = 'flower_flow' AND (OLD.state = 'running' AND NEW.state <> 'running'
        OR NEW.metadata->'output' IS DISTINCT FROM OLD.metadata->'output'))
    EXECUTE FUNCTION flower_fence_job();`

// ErrStale is a write refused because the attempt's token is no longer
// the job's current one: the flow was taken over.
var ErrStale = errors.New("this attempt's fencing token is stale (the flow was taken over); the write is refused")

// token is an attempt's fencing token, as it travels in River's metadata
// (the output of every change the worker makes to the job).
type token struct {
	Epoch  int64  `json:"epoch"`
	Worker string `json:"worker"`
}

// recorded is what a worker records with each change of a job's state:
// the attempt's outcome and its token, which the trigger checks.
type recorded struct {
	Outcome
	Note  string `json:"note,omitempty"`
	Fence token  `json:"fence"`
}

// claim bumps job's token for this attempt on worker, if River's row says
// the job runs there in this attempt. ok is false when it does not.
func claim(ctx context.Context, pool *pgxpool.Pool, job *river.Job[FlowArgs], worker string) (tok token, ok bool, err error) {
	err = pool.QueryRow(ctx, `WITH j AS (SELECT id FROM river_job WHERE id = $1 AND state = 'running' AND attempt = $3
			AND attempted_by[array_upper(attempted_by, 1)] = $2 FOR UPDATE)
		INSERT INTO flower_fences (job_id, epoch, worker, attempt) SELECT id, 1, $2, $3 FROM j
		ON CONFLICT (job_id) DO UPDATE SET epoch = flower_fences.epoch + 1, worker = excluded.worker, attempt = excluded.attempt
		RETURNING epoch`, job.ID, worker, job.Attempt).Scan(&tok.Epoch)
	if errors.Is(err, pgx.ErrNoRows) {
		return tok, false, nil
	}
	tok.Worker = worker
	return tok, err == nil, err
}

// fenced runs do in a transaction in which job's token is tok (locked
// against a takeover until the commit), or returns ErrStale.
func fenced(ctx context.Context, pool *pgxpool.Pool, job int64, tok token, do func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		cur, err := holds(ctx, tx, job, tok)
		if err != nil {
			return err
		}
		if !cur {
			return ErrStale
		}
		return do(tx)
	})
}

// holds reports whether tok is job's token, locking the fence row against
// a takeover until the transaction ends.
func holds(ctx context.Context, tx pgx.Tx, job int64, tok token) (bool, error) {
	var epoch int64
	err := tx.QueryRow(ctx, "SELECT epoch FROM flower_fences WHERE job_id = $1 FOR SHARE", job).Scan(&epoch)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil && epoch == tok.Epoch, err
}

// ownSQL says whether the attempt that holds token epoch still has its
// row open: not ended by a takeover (which ends it) nor by its own end.
const ownSQL = `SELECT EXISTS (SELECT 1 FROM flower_flow_attempts WHERE job_id = $1 AND epoch = $2 AND ended_at IS NULL)`

// fencedOwn is fenced for an attempt's own records (its end, replayed):
// do runs with cur true while tok is the job's token, and with cur false
// when a later attempt took the token but this attempt's row is still
// open (River retried the job before the record got in; no takeover
// ended it). Otherwise ErrStale.
func fencedOwn(ctx context.Context, pool *pgxpool.Pool, job int64, tok token, do func(tx pgx.Tx, cur bool) error) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		cur, err := holds(ctx, tx, job, tok)
		switch {
		case err != nil:
			return err
		case cur:
			return do(tx, true)
		}
		var own bool
		if err := tx.QueryRow(ctx, ownSQL, job, tok.Epoch).Scan(&own); err != nil {
			return err
		}
		if !own {
			return ErrStale
		}
		return do(tx, false)
	})
}

// current reports whether tok is still job's token.
func current(ctx context.Context, pool *pgxpool.Pool, job int64, tok token) (bool, error) {
	err := fenced(ctx, pool, job, tok, func(pgx.Tx) error { return nil })
	if errors.Is(err, ErrStale) {
		return false, nil
	}
	return err == nil, err
}

// replayFence is storeFence for writes replayed from a spool: they are
// also made while the attempt's own row is still open (fencedOwn), so an
// attempt River retried before its writes got in keeps its records; a
// takeover, which ends the row, refuses them.
func replayFence(job int64, tok token) sessionstore.FenceFunc {
	return func(ctx context.Context, tx *sql.Tx) error {
		err := storeFence(job, tok)(ctx, tx)
		if !errors.Is(err, sessionstore.ErrFenced) {
			return err
		}
		var own bool
		if err := tx.QueryRowContext(ctx, ownSQL, job, tok.Epoch).Scan(&own); err != nil {
			return err
		}
		if !own {
			return err
		}
		return nil
	}
}

// storeFence is the session store's fence of an attempt (SetFence): every
// write of its run, documents and sessions commits only while tok is the
// job's token.
func storeFence(job int64, tok token) sessionstore.FenceFunc {
	return func(ctx context.Context, tx *sql.Tx) error {
		var cur int64
		err := tx.QueryRowContext(ctx, "SELECT epoch FROM flower_fences WHERE job_id = $1 FOR SHARE", job).Scan(&cur)
		switch {
		case errors.Is(err, sql.ErrNoRows) || err == nil && cur != tok.Epoch:
			return fmt.Errorf("job %d token %d: %w", job, tok.Epoch, sessionstore.ErrFenced)
		case err != nil:
			return err
		}
		return nil
	}
}
