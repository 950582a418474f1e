package harness

import (
	"context"
	"fmt"
	"log"

	"github.com/flowerhq/flower/sessionstore"
)

// sqliteStore adapts *sessionstore.Store to SessionStore.
type sqliteStore struct{ s *sessionstore.Store }

func (a sqliteStore) Mirror(ctx context.Context, line []byte) error { return a.s.Mirror(ctx, line) }

func (a sqliteStore) Materialize(ctx context.Context, projectKey, sessionID, configDir string) error {
	_, err := a.s.Materialize(ctx, sessionstore.Key{ProjectKey: projectKey, SessionID: sessionID}, configDir)
	return err
}

func (a sqliteStore) Close() error { return a.s.Close() }

// OpenSQLiteStore is the default Options.OpenStore: the seed's hard-wired
// pruning store at <run_dir>/sessions.db with the Runtime's trim, ephemeral
// and keep_denials policies.
func OpenSQLiteStore(_ context.Context, path string, o StoreOptions) (SessionStore, error) {
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
		return nil, fmt.Errorf("harness: %w", err)
	}
	return sqliteStore{s}, nil
}
