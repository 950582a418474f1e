// Package batteries is what a program needs besides the libraries to run
// the seed's Runtime: the SQLite session store at <run_dir>/sessions.db (or
// any store sessionstore.OpenURL opens, through Adapt) and the copy of the
// user's login into a portable config dir. harness and flow link neither
// the SQLite driver nor sessionstore, so that a program which brings its own
// store (or none) does not carry them; a program that wants the seed's
// Runtime, where "the session store is hard-wired", builds it here:
//
//	rt, err := batteries.New(ctx, batteries.NewOptions("/path/to/workspace"))
//
// Lifecycle: NewOptions (or Defaults on options of your own) fills a
// harness.Options before harness.New; New does both. The store it opens
// lives until Runtime.Close. Nothing is kept at package level.
package batteries

import "context"
import "fmt"
import "log"
import "strings"
import "sync"

import "github.com/flowerhq/flower/harness"
import "github.com/flowerhq/flower/sessionstore"

// NewOptions is harness.NewOptions(workspace) with Defaults applied: the
// seed's Runtime options, session store included.
func NewOptions(workspace string) harness.Options {
	o := harness.NewOptions(workspace)
	Defaults(&o)
	return o
}

// New is the seed's Runtime(workspace=…, …): harness.New with Defaults
// applied to o, so that every step mirrors into <run_dir>/sessions.db and
// every resume loads through it (expire, trim, prune, repair), portable or
// not. Close the Runtime when done.
func New(ctx context.Context, o harness.Options) (*harness.Runtime, error) {
	Defaults(&o)
	return harness.New(ctx, o)
}

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

// Materialize loads the session for a resume in projectKey's workspace.
// The session is found by its id wherever it is stored: a run that was not
// portable keys it by claude's own project dir, another checkout path (or
// machine) by that path. When several workspaces hold it, the newest wins
// and a warning says so; one recorded elsewhere is first copied under
// projectKey (Adopt), then written from there.
func (a *storeAdapter) Materialize(ctx context.Context, projectKey, sessionID, configDir string) error {
	holders, err := a.s.Holders(ctx, sessionID)
	if err != nil || len(holders) == 0 {
		_, err := a.s.Materialize(ctx, sessionstore.Key{ProjectKey: projectKey, SessionID: sessionID}, configDir)
		return err
	}
	found := holders[0]
	if len(holders) > 1 {
		others := make([]string, 0, len(holders)-1)
		for _, h := range holders[1:] {
			others = append(others, h.ProjectKey)
		}
		a.s.Warnf("session %s is stored under %d workspaces; resuming the newest, %s (also in %s)",
			sessionID, len(holders), found.ProjectKey, strings.Join(others, ", "))
	}
	// A copy under projectKey first: what claude appends then continues a
	// complete transcript there (see sessionstore.Adopt).
	if _, err := a.s.Adopt(ctx, found, projectKey); err != nil {
		return err
	}
	_, err = a.s.Materialize(ctx, sessionstore.Key{ProjectKey: projectKey, SessionID: sessionID}, configDir)
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
		return nil, fmt.Errorf("batteries: %w", err)
	}
	return Adapt(s), nil
}
