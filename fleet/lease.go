package fleet

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// leaseEvery is how often a worker with rescue-after d renews its lease and
// looks for flows to take over: a third of d (so two renewals may fail
// before the lease expires), at most every 30 s.
func leaseEvery(d time.Duration) time.Duration { return min(d/3, 30*time.Second) }

// margin is how long past a worker's lease expiry its flows are still
// not taken over: the time its supervisors have to kill the flows' claude
// at the lease's local deadline (which is never later than the expiry on
// the database's clock). A tenth of d, between 1 s and 30 s.
func margin(d time.Duration) time.Duration { return min(max(d/10, time.Second), 30*time.Second) }

// lease is one worker's row in flower_workers.
type lease struct {
	pool *pgxpool.Pool
	id   string
	ttl  time.Duration
}

// acquire writes the worker's lease, valid ttl from now on the database's
// clock. An id already in use by a live lease is refused.
func (l *lease) acquire(ctx context.Context, host string, pid int) error {
	tag, err := l.pool.Exec(ctx, `INSERT INTO flower_workers (id, host, pid, expires_at, margin_ms) VALUES ($1, $2, $3, now() + $4::interval, $5)
		ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid, started_at = now(), renewed_at = now(),
		expires_at = excluded.expires_at, margin_ms = excluded.margin_ms, stopped_at = NULL WHERE flower_workers.expires_at < now()`,
		l.id, host, pid, interval(l.ttl), margin(l.ttl).Milliseconds())
	if err != nil {
		return fmt.Errorf("worker %s: lease: %w", l.id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("worker %s: another live worker has this id (--id)", l.id)
	}
	return nil
}

// renew extends the lease. ok is false when the lease had expired before
// this renewal (others may have taken the worker's flows over already).
func (l *lease) renew(ctx context.Context) (ok bool, err error) {
	err = l.pool.QueryRow(ctx, `UPDATE flower_workers w SET renewed_at = now(), expires_at = now() + $2::interval
		FROM (SELECT id, expires_at AS old FROM flower_workers WHERE id = $1 FOR UPDATE) o
		WHERE w.id = o.id RETURNING o.old >= now()`, l.id, interval(l.ttl)).Scan(&ok)
	return ok, err
}

// release expires the lease at once: the worker has no flows left.
func (l *lease) release(ctx context.Context) error {
	_, err := l.pool.Exec(ctx, "UPDATE flower_workers SET expires_at = now(), stopped_at = now() WHERE id = $1", l.id)
	return err
}

// takeOver makes every running flow job whose worker's lease has expired
// more than the worker's margin ago (or who never had one) available
// again, as River's rescuer would: with an error naming the worker,
// cancelled when a cancel was asked for, discarded when its attempts are
// spent. In the same transaction it bumps each job's fencing token (the old
// worker's writes are refused from now on) and ends its open attempt rows
// as taken over. It returns the ids taken over.
//
// With me set it also takes this worker's own running jobs that it runs no
// flow of (mine lists those it does) and that started more than age ago:
// jobs whose end River could not record while the database was away.
func takeOver(ctx context.Context, pool *pgxpool.Pool, me string, mine []int64, age time.Duration) (ids []int64, err error) {
	return takeOverIf(ctx, pool, me, mine, age, true)
}

// takeOverIf is takeOver; with others false it takes only this worker's
// own jobs (by age), none of other workers: a worker just back from a
// database outage gives the others, whose leases ran out in the same
// outage, a lease's length to renew theirs and make what they kept.
func takeOverIf(ctx context.Context, pool *pgxpool.Pool, me string, mine []int64, age time.Duration, others bool) (ids []int64, err error) {
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		ids = nil
		if _, err := tx.Exec(ctx, "SELECT set_config('flower.takeover', 'on', true)"); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, takeOverSQL, Kind, me, mine, interval(age), others)
		if err != nil {
			return err
		}
		ids, err = pgx.CollectRows(rows, pgx.RowTo[int64])
		return err
	})
	return ids, err
}

const takeOverSQL = `WITH stale AS (
		SELECT j.id, coalesce(j.attempted_by[array_upper(j.attempted_by, 1)], '') AS worker,
			j.metadata ? 'cancel_attempted_at' AS cancel, j.attempt >= j.max_attempts AS spent
		FROM river_job j
		WHERE j.state = 'running' AND j.kind = $1 AND ($5::boolean AND NOT EXISTS (
			SELECT 1 FROM flower_workers w WHERE w.id = j.attempted_by[array_upper(j.attempted_by, 1)]
				AND w.expires_at + w.margin_ms * interval '1 millisecond' >= now())
			OR j.attempted_by[array_upper(j.attempted_by, 1)] = $2 AND NOT (j.id = ANY($3::bigint[]))
				AND j.attempted_at < now() - $4::interval)
		FOR UPDATE OF j SKIP LOCKED),
	bumped AS (
		UPDATE flower_fences f SET epoch = f.epoch + 1, worker = '' FROM stale s WHERE f.job_id = s.id RETURNING f.job_id),
	ended AS (
		UPDATE flower_flow_attempts a SET ended_at = now(),
			error = 'taken over: worker ' || s.worker || ' stopped renewing its lease'
		FROM stale s WHERE a.job_id = s.id AND a.ended_at IS NULL RETURNING a.job_id)
	UPDATE river_job j SET
		state = (CASE WHEN s.cancel THEN 'cancelled' WHEN s.spent THEN 'discarded' ELSE 'available' END)::river_job_state,
		finalized_at = CASE WHEN s.cancel OR s.spent THEN now() END,
		scheduled_at = now(),
		errors = array_append(j.errors, jsonb_build_object('at', now(), 'attempt', j.attempt, 'trace', '',
			'error', 'flower: worker ' || s.worker || ' stopped renewing its lease (or lost its flow in a database outage); its flow was taken over')),
		metadata = j.metadata || jsonb_build_object('flower:takeovers', coalesce((j.metadata->>'flower:takeovers')::int, 0) + 1)
	FROM stale s WHERE j.id = s.id AND j.state = 'running'
	RETURNING j.id`

// interval renders d for PostgreSQL's interval type.
func interval(d time.Duration) string { return fmt.Sprintf("%d milliseconds", d.Milliseconds()) }
