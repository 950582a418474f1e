// Package wire plugs what the libraries do not link into a harness.Runtime:
// the seed's SQLite session store (or any store sessionstore.OpenURL opens,
// through Adapt), the copy of the user's login into a
// portable config dir, and the guard self-test against the scripted model.
// harness and flow stay free of the SQLite driver and of package scripted;
// the command (and the end-to-end tests) import this package instead.
//
// Lifecycle: Defaults fills a harness.Options before harness.New; the store
// it opens lives until Runtime.Close. GuardSelfTest is one self-contained
// canary run (its own scripted model, temporary workspace and HOME).
package wire

import "context"
import "fmt"
import "log"
import "os"
import "path/filepath"
import "sync"
import "time"

import "github.com/flowerhq/flower/harness"
import "github.com/flowerhq/flower/sessionstore"

// Defaults wires the seed's batteries into o: the SQLite store at
// <run_dir>/sessions.db and the credentials copy. Fields already set stay.
func Defaults(o *harness.Options) {
	if o.OpenStore == nil {
		o.OpenStore = OpenSQLiteStore
	}
	if o.CopyCredentials == nil {
		o.CopyCredentials = sessionstore.CopyCredentials
	}
}

// Adapt makes an open *sessionstore.Store (either backend) the Runtime's
// SessionStore; closing it twice is harmless.
func Adapt(s *sessionstore.Store) harness.SessionStore { return &storeAdapter{s: s} }

// storeAdapter is the Runtime's SessionStore. One that OpenSQLiteStore made
// (path set) also recovers from a damaged file: when SQLite reports
// corruption, or a resume cannot be loaded and quick_check then finds a
// fault, the file (with -wal, -shm) is moved aside, one warning goes to
// stderr, and a fresh store at path takes over. The sessions it held are
// lost: Materialize says so with harness.ErrSessionLost, and the Runtime
// starts such a step's session fresh.
type storeAdapter struct {
	mu   sync.RWMutex
	s    *sessionstore.Store
	path string
	opts []sessionstore.Option
	once sync.Once
	err  error
}

// store is the current store (a reset replaces it).
func (a *storeAdapter) store() *sessionstore.Store {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.s
}

func (a *storeAdapter) Mirror(ctx context.Context, line []byte) error {
	s := a.store()
	err := s.Mirror(ctx, line)
	if a.path != "" && sessionstore.IsCorrupt(err) {
		if s, err = a.reset(s, err); err == nil {
			err = s.Mirror(ctx, line)
		}
	}
	return err
}

func (a *storeAdapter) Materialize(ctx context.Context, projectKey, sessionID, configDir string) error {
	s := a.store()
	_, err := s.Materialize(ctx, sessionstore.Key{ProjectKey: projectKey, SessionID: sessionID}, configDir)
	if err == nil || a.path == "" {
		return err
	}
	if !sessionstore.IsCorrupt(err) {
		// A session the store should hold did not load: suspect the file.
		if qc := s.QuickCheck(ctx); qc != nil && sessionstore.IsCorrupt(qc) {
			err = qc
		}
	}
	if sessionstore.IsCorrupt(err) {
		if _, rerr := a.reset(s, err); rerr != nil {
			return rerr
		}
	}
	return fmt.Errorf("%w: %v", harness.ErrSessionLost, err)
}

// reset replaces the damaged store old (unless another call already did)
// with a fresh one at the same path.
func (a *storeAdapter) reset(old *sessionstore.Store, why error) (*sessionstore.Store, error) {
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
		return nil, fmt.Errorf("wire: %w (the store is damaged: %v)", err, why)
	}
	fmt.Fprintf(os.Stderr, "flower: warning: the session store %s is damaged (%v); moved it to %s and started a fresh one: the sessions it held start fresh (brief, goal and notes are kept)\n",
		path, why, filepath.Base(aside))
	s, err := sessionstore.Open(path, opts...)
	if err != nil {
		return nil, fmt.Errorf("wire: %w", err)
	}
	return s, nil
}

func (a *storeAdapter) Checkpoint(ctx context.Context) error { return a.store().Checkpoint(ctx) }

func (a *storeAdapter) Close() error {
	a.once.Do(func() { a.err = a.store().Close() })
	return a.err
}

// StoreOptions are the sessionstore options of the Runtime's trim,
// ephemeral and keep_denials policies; warnings go to logf.
func StoreOptions(o harness.StoreOptions, logf sessionstore.Logf) []sessionstore.Option {
	trim := sessionstore.DefaultTrimPolicy()
	trim.Enabled = o.Trim
	eph := sessionstore.DefaultEphemeralPolicy()
	eph.Enabled = o.Ephemeral
	prune := sessionstore.DefaultPrunePolicy()
	prune.KeepDenials = o.KeepDenials
	return []sessionstore.Option{sessionstore.WithWorkspace(o.Workspace), sessionstore.WithTrim(trim),
		sessionstore.WithEphemeral(eph), sessionstore.WithPrune(prune), sessionstore.WithLogf(logf)}
}

// OpenSQLiteStore is the seed's hard-wired pruning store at path with the
// Runtime's trim, ephemeral and keep_denials policies.
// A store that SQLite finds damaged as it opens is moved aside for a fresh
// one (see storeAdapter).
func OpenSQLiteStore(_ context.Context, path string, o harness.StoreOptions) (harness.SessionStore, error) {
	opts := StoreOptions(o, func(format string, a ...any) { log.Printf("sessionstore: "+format, a...) })
	s, err := sessionstore.Open(path, opts...)
	if sessionstore.IsCorrupt(err) {
		s, err = openFresh(path, err, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("wire: %w", err)
	}
	return &storeAdapter{s: s, path: path, opts: opts}, nil
}
