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
import "sync"

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

type storeAdapter struct {
	s    *sessionstore.Store
	once sync.Once
	err  error
}

func (a *storeAdapter) Mirror(ctx context.Context, line []byte) error { return a.s.Mirror(ctx, line) }

func (a *storeAdapter) Materialize(ctx context.Context, projectKey, sessionID, configDir string) error {
	_, err := a.s.Materialize(ctx, sessionstore.Key{ProjectKey: projectKey, SessionID: sessionID}, configDir)
	return err
}

func (a *storeAdapter) Checkpoint(ctx context.Context) error { return a.s.Checkpoint(ctx) }

func (a *storeAdapter) Close() error {
	a.once.Do(func() { a.err = a.s.Close() })
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
func OpenSQLiteStore(_ context.Context, path string, o harness.StoreOptions) (harness.SessionStore, error) {
	s, err := sessionstore.Open(path, StoreOptions(o, func(format string, a ...any) { log.Printf("sessionstore: "+format, a...) })...)
	if err != nil {
		return nil, fmt.Errorf("wire: %w", err)
	}
	return Adapt(s), nil
}
