package sessionstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ErrFenced is what a FenceFunc returns when the writer's token is no longer
// current: the write is refused, nothing of it is applied.
var ErrFenced = errors.New("fenced: this writer's attempt is no longer the current one")

// FenceFunc runs inside every write transaction of a Store (appended
// entries, runs, documents, deletions) before it commits, on the same
// database: a worker of a queued flow checks there that its fencing token
// is still current (fleet), so a stale worker's write is refused in the
// same transaction it would have been applied in. It returns ErrFenced (or
// wraps it) to refuse.
type FenceFunc func(ctx context.Context, tx *sql.Tx) error

// SetFence makes every later write of s conditional on f (nil: none).
func (s *Store) SetFence(f FenceFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fence = f
}

// fenced runs the store's fence, if any, in tx.
func (s *Store) fenced(ctx context.Context, tx *sql.Tx) error {
	s.mu.Lock()
	f := s.fence
	s.mu.Unlock()
	if f == nil {
		return nil
	}
	if err := f(ctx, tx); err != nil {
		return fmt.Errorf("write refused: %w", err)
	}
	return nil
}

// inTx runs do in one transaction that the fence guards.
func (s *Store) inTx(ctx context.Context, do func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := s.fenced(ctx, tx); err != nil {
		return err
	}
	if err := do(tx); err != nil {
		return err
	}
	return tx.Commit()
}
