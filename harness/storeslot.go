package harness

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// ErrSessionLost is wrapped by a SessionStore's Materialize error when the
// session cannot be loaded because the store lost it (a damaged store was
// moved aside for a fresh one): the Runtime then starts the step's session
// fresh, and says so with a "store" event (fresh: true).
var ErrSessionLost = errors.New("the session store lost the session")

// SessionStore is what the Runtime needs of the session store: mirror every
// transcript_mirror line as it comes, and before a --resume write the
// loaded (expired, trimmed, pruned) transcript into configDir.
type SessionStore interface {
	Mirror(ctx context.Context, line []byte) error
	Materialize(ctx context.Context, projectKey, sessionID, configDir string) error
	Close() error
}

// checkpointer is a SessionStore that can settle its writes ahead of Close
// (SQLite's write-ahead log): the Runtime asks it to once a step has ended,
// so that the log stays short over a long run and Close has little left to
// write.
type checkpointer interface {
	Checkpoint(ctx context.Context) error
}

// checkpoint settles st's writes when it can; a store that cannot has
// nothing to settle.
func checkpoint(ctx context.Context, st SessionStore) error {
	if c, ok := st.(checkpointer); ok {
		return c.Checkpoint(ctx)
	}
	return nil
}

// storeSlot is the Runtime's session store, opened on first use. An open
// costs milliseconds (SQLite: file, WAL, migrations) and claude hundreds to
// boot, so the first step spawns claude and then gets the store (a resume,
// which needs the store first, gets it before the spawn). The open runs
// once, with the first caller's context values but not its cancellation
// (every later step shares what it opened); a failed open fails every step
// with its error, and no step retries it.
type storeSlot struct {
	open   func(ctx context.Context) (SessionStore, error)
	once   sync.Once
	begun  atomic.Bool // an open has started: close has something to close
	st     SessionStore
	err    error
	closed sync.Once
	cerr   error
}

// newStoreSlot is the slot of the store Options.OpenStore opens at
// <runDir>/sessions.db, every mirrored line redacted by r.red; nil when the
// Runtime runs without a store.
func newStoreSlot(r *Runtime) *storeSlot {
	o := r.opts
	if o.OpenStore == nil || o.NoStore {
		return nil
	}
	so := StoreOptions{Workspace: r.workspace, Trim: o.Trim, Ephemeral: o.Ephemeral, KeepDenials: o.KeepDenials}
	path := filepath.Join(r.runDir, "sessions.db")
	return &storeSlot{open: func(ctx context.Context) (SessionStore, error) {
		st, err := o.OpenStore(ctx, path, so)
		if err != nil {
			return nil, fmt.Errorf("harness: session store: %w", err)
		}
		return redactedStore{st, r.red}, nil
	}}
}

// get opens the store (once; callers meanwhile wait for that open) and
// returns it, or why it is not open.
func (s *storeSlot) get(ctx context.Context) (SessionStore, error) {
	s.once.Do(func() {
		s.begun.Store(true)
		s.st, s.err = s.open(context.WithoutCancel(ctx))
	})
	return s.st, s.err
}

// checkpoint settles what the steps wrote so far, when the store is open
// (nothing opened: nothing written). It does not stop for a cancelled ctx:
// a cancelled step's lines are in the store too. It is bounded by the
// store (sessionstore waits at most 50 ms for other connections), and a
// failure is left to Close, which settles everything anyway.
func (s *storeSlot) checkpoint(ctx context.Context) {
	if s == nil || !s.begun.Load() {
		return
	}
	if st, err := s.get(ctx); err == nil {
		checkpoint(context.WithoutCancel(ctx), st)
	}
}

// close closes the store when one was opened; it is idempotent. A store
// that failed to open has nothing to close (the steps reported why).
func (s *storeSlot) close() error {
	if s == nil || !s.begun.Load() {
		return nil
	}
	st, err := s.get(context.Background()) // waits for an open under way
	if err != nil {
		return nil
	}
	s.closed.Do(func() { s.cerr = st.Close() })
	return s.cerr
}
