// Package flower is the composition: what a program needs besides the
// libraries to run the default Runtime. It wires the SQLite session store
// at <run_dir>/sessions.db (or any store sessionstore.OpenURL opens: a
// *sessionstore.Store is a harness.SessionStore) and the copy of the user's
// login into a portable config dir into harness.Options. harness and flow
// link neither the SQLite driver nor sessionstore, so that a program which
// brings its own store (or none) does not carry them; a program that wants
// the default Runtime, where every step is mirrored into the store and
// every resume loads through it, builds it here:
//
//	rt, err := flower.New(ctx, flower.NewOptions("/path/to/workspace"))
//	rt, err := flower.New(ctx, o, flower.WithLogger(slog.New(h)))
//
// and then runs steps on it (rt.Run) or workflows with package flow.
//
// Lifecycle: NewOptions (or Defaults on options of your own) fills a
// harness.Options before harness.New; New does both. The store it opens
// lives until Runtime.Close. The store's warnings (a damaged store moved
// aside, a policy that could not apply) go to the logger of WithLogger,
// slog.Default() without one. Nothing is kept at package level.
package flower

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/sessionstore"
)

// Option configures New and Defaults.
type Option func(*config)

type config struct{ logger *slog.Logger }

// WithLogger sends the session store's warnings to l (default
// slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

func configOf(opts []Option) config {
	c := config{logger: slog.Default()}
	for _, o := range opts {
		o(&c)
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	return c
}

// NewOptions is harness.NewOptions(workspace) with Defaults applied: the
// default Runtime options, session store included.
func NewOptions(workspace string, opts ...Option) harness.Options {
	o := harness.NewOptions(workspace)
	Defaults(&o, opts...)
	return o
}

// New is the default Runtime: harness.New with Defaults applied to o, so
// that every step mirrors into <run_dir>/sessions.db and every resume loads
// through it (expire, trim, prune, repair), portable or not. Close the
// Runtime when done.
func New(ctx context.Context, o harness.Options, opts ...Option) (*harness.Runtime, error) {
	Defaults(&o, opts...)
	return harness.New(ctx, o)
}

// Defaults wires the store and the credentials copy into o: the SQLite
// store at <run_dir>/sessions.db and the copy of the login. Fields already
// set stay.
func Defaults(o *harness.Options, opts ...Option) {
	c := configOf(opts)
	if o.OpenStore == nil {
		o.OpenStore = func(ctx context.Context, path string, so harness.StoreOptions) (harness.SessionStore, error) {
			return openSQLiteStore(ctx, path, so, c.logger)
		}
	}
	if o.CopyCredentials == nil {
		o.CopyCredentials = sessionstore.CopyCredentials
	}
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
	opts := []sessionstore.Option{sessionstore.WithWorkspace(o.Workspace), sessionstore.WithTrim(trim),
		sessionstore.WithEphemeral(eph), sessionstore.WithPrune(prune), sessionstore.WithLogf(logf)}
	if o.ReadOnly {
		opts = append(opts, sessionstore.WithReadOnly())
	}
	return opts
}

// OpenSQLiteStore is the default (trimming, pruning) store at path with the
// Runtime's trim, ephemeral and keep_denials policies, its warnings to
// slog.Default(). A store that SQLite finds damaged, as it opens or later,
// is moved aside for a fresh one (see sqliteStore).
func OpenSQLiteStore(ctx context.Context, path string, o harness.StoreOptions) (harness.SessionStore, error) {
	return openSQLiteStore(ctx, path, o, slog.Default())
}

func openSQLiteStore(_ context.Context, path string, o harness.StoreOptions, logger *slog.Logger) (harness.SessionStore, error) {
	opts := StoreOptions(o, func(format string, a ...any) { logger.Warn(fmt.Sprintf(format, a...), "component", "sessionstore") })
	s, err := sessionstore.Open(path, opts...)
	if sessionstore.IsCorrupt(err) {
		s, err = openFresh(path, err, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("session store: %w", err)
	}
	return &sqliteStore{s: s, path: path, opts: opts}, nil
}

// A *sessionstore.Store is the Runtime's session store as it is.
var _ harness.SessionStore = (*sessionstore.Store)(nil)
