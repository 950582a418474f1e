// Package batteries is what a program needs besides the libraries to run
// the default Runtime: the SQLite session store at <run_dir>/sessions.db (or
// any store sessionstore.OpenURL opens: a *sessionstore.Store is a
// harness.SessionStore) and the copy of the user's login into a portable
// config dir. harness and flow link neither the SQLite driver nor
// sessionstore, so that a program which brings its own store (or none) does
// not carry them; a program that wants the default Runtime, where every step
// is mirrored into the store and every resume loads through it, builds it
// here:
//
//	rt, err := batteries.New(ctx, batteries.NewOptions("/path/to/workspace"))
//
// Lifecycle: NewOptions (or Defaults on options of your own) fills a
// harness.Options before harness.New; New does both. The store it opens
// lives until Runtime.Close. Nothing is kept at package level.
package batteries

import (
	"context"
	"fmt"
	"log"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/sessionstore"
)

// NewOptions is harness.NewOptions(workspace) with Defaults applied: the
// default Runtime options, session store included.
func NewOptions(workspace string) harness.Options {
	o := harness.NewOptions(workspace)
	Defaults(&o)
	return o
}

// New is the default Runtime: harness.New with Defaults
// applied to o, so that every step mirrors into <run_dir>/sessions.db and
// every resume loads through it (expire, trim, prune, repair), portable or
// not. Close the Runtime when done.
func New(ctx context.Context, o harness.Options) (*harness.Runtime, error) {
	Defaults(&o)
	return harness.New(ctx, o)
}

// Defaults wires the batteries into o: the SQLite store at
// <run_dir>/sessions.db and the credentials copy. Fields already set stay.
func Defaults(o *harness.Options) {
	if o.OpenStore == nil {
		o.OpenStore = OpenSQLiteStore
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
// Runtime's trim, ephemeral and keep_denials policies. A store that SQLite
// finds damaged, as it opens or later, is moved aside for a fresh one (see
// sqliteStore).
func OpenSQLiteStore(_ context.Context, path string, o harness.StoreOptions) (harness.SessionStore, error) {
	opts := StoreOptions(o, func(format string, a ...any) { log.Printf("sessionstore: "+format, a...) })
	s, err := sessionstore.Open(path, opts...)
	if sessionstore.IsCorrupt(err) {
		s, err = openFresh(path, err, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("batteries: %w", err)
	}
	return &sqliteStore{s: s, path: path, opts: opts}, nil
}

// A *sessionstore.Store is the Runtime's session store as it is.
var _ harness.SessionStore = (*sessionstore.Store)(nil)
