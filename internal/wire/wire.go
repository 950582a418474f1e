// Package wire plugs what the libraries do not link into a harness.Runtime:
// the seed's SQLite session store, the copy of the user's login into a
// portable config dir, and the guard self-test against the scripted model.
// harness and flow stay free of the SQLite driver and of package scripted;
// the command (and the end-to-end tests) import this package instead.
//
// Lifecycle: Defaults fills a harness.Options before harness.New; the store
// it opens lives until Runtime.Close. GuardSelfTest is one self-contained
// canary run (its own scripted model, temporary workspace and HOME).
package wire

import (
	"context"
	"fmt"
	"log"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/sessionstore"
)

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

// sqliteStore adapts *sessionstore.Store to harness.SessionStore.
type sqliteStore struct{ s *sessionstore.Store }

func (a sqliteStore) Mirror(ctx context.Context, line []byte) error { return a.s.Mirror(ctx, line) }

func (a sqliteStore) Materialize(ctx context.Context, projectKey, sessionID, configDir string) error {
	_, err := a.s.Materialize(ctx, sessionstore.Key{ProjectKey: projectKey, SessionID: sessionID}, configDir)
	return err
}

func (a sqliteStore) Close() error { return a.s.Close() }

// OpenSQLiteStore is the seed's hard-wired pruning store at path with the
// Runtime's trim, ephemeral and keep_denials policies.
func OpenSQLiteStore(_ context.Context, path string, o harness.StoreOptions) (harness.SessionStore, error) {
	trim := sessionstore.DefaultTrimPolicy()
	trim.Enabled = o.Trim
	eph := sessionstore.DefaultEphemeralPolicy()
	eph.Enabled = o.Ephemeral
	prune := sessionstore.DefaultPrunePolicy()
	prune.KeepDenials = o.KeepDenials
	s, err := sessionstore.Open(path,
		sessionstore.WithWorkspace(o.Workspace),
		sessionstore.WithTrim(trim),
		sessionstore.WithEphemeral(eph),
		sessionstore.WithPrune(prune),
		sessionstore.WithLogf(func(format string, a ...any) { log.Printf("sessionstore: "+format, a...) }),
	)
	if err != nil {
		return nil, fmt.Errorf("wire: %w", err)
	}
	return sqliteStore{s}, nil
}
