package flower

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/sessionstore"
)

// sqliteStore is the store OpenSQLiteStore gives a Runtime: a
// *sessionstore.Store that also recovers from a damaged file. When SQLite
// reports corruption, or a resume cannot be loaded and quick_check then
// finds a fault, the file (with -wal, -shm) is moved aside, one warning goes
// to stderr, and a fresh store at the same path takes over. The sessions it
// held are lost: Materialize says so with harness.ErrSessionLost (also for
// a session missing later while a moved-aside file is there), and the
// Runtime starts such a step's session fresh. A session that was never
// stored is no loss: that error stands, and the resume fails as claude's
// would.
type sqliteStore struct {
	mu   sync.RWMutex
	s    *sessionstore.Store
	path string
	opts []sessionstore.Option
}

// store is the current store (a reset replaces it).
func (a *sqliteStore) store() *sessionstore.Store {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.s
}

func (a *sqliteStore) Mirror(ctx context.Context, line []byte) error {
	s := a.store()
	err := s.Mirror(ctx, line)
	if sessionstore.IsCorrupt(err) {
		if s, err = a.reset(s, err); err == nil {
			err = s.Mirror(ctx, line)
		}
	}
	return err
}

func (a *sqliteStore) Materialize(ctx context.Context, projectKey, sessionID, configDir string) error {
	s := a.store()
	err := s.Materialize(ctx, projectKey, sessionID, configDir)
	if err == nil {
		return nil
	}
	if !sessionstore.IsCorrupt(err) {
		// A session the store should hold did not load: suspect the file.
		if qc := s.QuickCheck(ctx); qc != nil && sessionstore.IsCorrupt(qc) {
			err = qc
		}
	}
	if !sessionstore.IsCorrupt(err) {
		if errors.Is(err, sessionstore.ErrNotFound) && a.damagedBefore() {
			// Not in the fresh store that replaced a damaged one: lost.
			return fmt.Errorf("%w: %v", harness.ErrSessionLost, err)
		}
		return err // never stored (an unknown id): claude says so, the step fails
	}
	if _, rerr := a.reset(s, err); rerr != nil {
		return rerr
	}
	return fmt.Errorf("%w: %v", harness.ErrSessionLost, err)
}

// damagedBefore reports whether a damaged store at this path was moved
// aside (by this process or an earlier one): a session missing now may
// have been in it.
func (a *sqliteStore) damagedBefore() bool {
	aside, _ := filepath.Glob(a.path + ".corrupt-*")
	return len(aside) > 0
}

// reset replaces the damaged store old (unless another call already did)
// with a fresh one at the same path.
func (a *sqliteStore) reset(old *sessionstore.Store, why error) (*sessionstore.Store, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.s != old {
		return a.s, nil
	}
	old.Close()
	fresh, err := openFresh(a.path, why, a.opts)
	if err != nil {
		return nil, err
	}
	a.s = fresh
	return fresh, nil
}

// openFresh moves the damaged store at path aside, warns once on stderr
// and opens a fresh one there.
func openFresh(path string, why error, opts []sessionstore.Option) (*sessionstore.Store, error) {
	aside, err := sessionstore.MoveAside(path, time.Now())
	if err != nil {
		return nil, fmt.Errorf("session store: %w (the store is damaged: %v)", err, why)
	}
	fmt.Fprintf(os.Stderr, "flower: warning: the session store %s is damaged (%v); moved it to %s and started a fresh one: the sessions it held start fresh (brief, goal and notes are kept)\n",
		path, why, filepath.Base(aside))
	s, err := sessionstore.Open(path, opts...)
	if err != nil {
		return nil, fmt.Errorf("session store: %w", err)
	}
	return s, nil
}

func (a *sqliteStore) Checkpoint(ctx context.Context) error { return a.store().Checkpoint(ctx) }

// Close closes the current store; closing twice is harmless.
func (a *sqliteStore) Close() error { return a.store().Close() }
