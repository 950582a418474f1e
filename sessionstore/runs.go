package sessionstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/flowerhq/flower/internal/redact"
)

// RunRecord is one run as the command records it in a shared store: its id,
// when it started (Unix seconds) and its manifest row, kept verbatim.
type RunRecord struct {
	Run       string          `json:"run"`
	StartedAt float64         `json:"started_at"`
	Row       json.RawMessage `json:"row"`
}

// PutRun stores r, replacing an earlier record of the same run; its row's
// credentials are replaced first (redact.Process).
func (s *Store) PutRun(ctx context.Context, r RunRecord) error {
	if r.Run == "" || !json.Valid(r.Row) {
		return fmt.Errorf("sessionstore: put run %q: empty id or a row that is not JSON", r.Run)
	}
	r.Row = redact.Process().Bytes(r.Row)
	return s.deliver(ctx, outWrite{Kind: "run", Run: &r})
}

// putRun is PutRun's write (of a redacted row).
func (s *Store) putRun(ctx context.Context, r RunRecord) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, s.q(`INSERT INTO runs (run, started_at, row) VALUES (?, ?, ?)
		ON CONFLICT (run) DO UPDATE SET started_at = excluded.started_at, row = excluded.row`), r.Run, r.StartedAt, string(r.Row))
		return err
	})
	if err != nil {
		return fmt.Errorf("sessionstore: put run %s: %w", r.Run, err)
	}
	return nil
}

// Runs lists every recorded run, oldest first.
func (s *Store) Runs(ctx context.Context) ([]RunRecord, error) {
	out, err := queryAll(ctx, s.db, "SELECT run, started_at, row FROM runs ORDER BY started_at, run",
		func(rows *sql.Rows) (r RunRecord, err error) {
			var row string
			err = rows.Scan(&r.Run, &r.StartedAt, &row)
			r.Row = json.RawMessage(row)
			return
		})
	if err != nil {
		return nil, fmt.Errorf("sessionstore: runs: %w", err)
	}
	return out, nil
}
