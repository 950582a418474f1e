package fleet

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Worker is one worker's lease as flower ui shows it.
type Worker struct {
	ID        string `json:"id"`
	Host      string `json:"host"`
	PID       int    `json:"pid"`
	StartedAt string `json:"started_at"`
	RenewedAt string `json:"renewed_at"`
	ExpiresAt string `json:"expires_at"`
	StoppedAt string `json:"stopped_at"` // "" while it runs
	Live      bool   `json:"live"`       // its lease has not expired
}

// Workers lists every worker that ever leased, the most recently renewed
// first.
func (f *Fleet) Workers(ctx context.Context) ([]Worker, error) {
	rows, err := f.pool.Query(ctx, `SELECT id, host, pid, started_at, renewed_at, expires_at, stopped_at, expires_at >= now()
		FROM flower_workers ORDER BY renewed_at DESC`)
	if err != nil {
		return nil, fmt.Errorf("workers: %w", err)
	}
	ws, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Worker, error) {
		var w Worker
		var started, renewed, expires time.Time
		var stopped *time.Time
		err := row.Scan(&w.ID, &w.Host, &w.PID, &started, &renewed, &expires, &stopped, &w.Live)
		w.StartedAt, w.RenewedAt, w.ExpiresAt, w.StoppedAt = rfc3339(&started), rfc3339(&renewed), rfc3339(&expires), rfc3339(stopped)
		return w, err
	})
	if err != nil {
		return nil, fmt.Errorf("workers: %w", err)
	}
	return ws, nil
}

// Retry re-queues a flow job that ended (cancelled, discarded, or
// completed): it becomes available at once with a fresh attempt. It
// returns the job's state after the call.
func (f *Fleet) Retry(ctx context.Context, id int64) (string, error) {
	if _, err := f.Get(ctx, id); err != nil {
		return "", err
	}
	row, err := f.client.JobRetry(ctx, id)
	if err != nil {
		return "", fmt.Errorf("queue retry %d: %w", id, err)
	}
	return string(row.State), nil
}
