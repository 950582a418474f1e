package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/sessionstore"
)

// flagStore names the session store every store-using command reads and
// writes: one SQLite file per run dir by default, or a database shared by
// many machines.
var flagStore = &cli.StringFlag{Name: "store", Usage: "session store `URL`: a file path, sqlite://PATH or postgres://… (default <run-dir>/sessions.db)", EnvVars: []string{"FLOWER_STORE"}}

// storeURL is --store, or the SQLite file in the run dir.
func storeURL(c *cli.Context) string {
	if u := c.String(flagStore.Name); u != "" {
		return u
	}
	return filepath.Join(c.String(flagStepRunDir.Name), "sessions.db")
}

// openStore opens the store of c with the given resume policies; warnings
// go to the command's stderr.
func openStore(ctx context.Context, c *cli.Context, u string, so harness.StoreOptions) (*sessionstore.Store, error) {
	trim := sessionstore.DefaultTrimPolicy()
	trim.Enabled = so.Trim
	eph := sessionstore.DefaultEphemeralPolicy()
	eph.Enabled = so.Ephemeral
	prune := sessionstore.DefaultPrunePolicy()
	prune.KeepDenials = so.KeepDenials
	return sessionstore.OpenURL(ctx, u, sessionstore.WithWorkspace(so.Workspace), sessionstore.WithTrim(trim),
		sessionstore.WithEphemeral(eph), sessionstore.WithPrune(prune),
		sessionstore.WithLogf(func(f string, a ...any) { fmt.Fprintf(c.App.ErrWriter, "flower: "+f+"\n", a...) }))
}

// withStore hands the Runtime of o the store --store names, opened now,
// before anything is written, so a bad URL, an unreachable server or a
// missing database fails with one line and leaves no run behind. Without
// --store, o keeps the Runtime's default (<run-dir>/sessions.db). release
// closes the store if the Runtime never took it over.
func withStore(c *cli.Context, o *harness.Options) (release func(), err error) {
	u := c.String(flagStore.Name)
	if u == "" || o.NoStore {
		return func() {}, nil
	}
	ws, err := filepath.Abs(o.Workspace)
	if err != nil {
		return nil, err
	}
	st, err := openStore(c.Context, c, u, harness.StoreOptions{Workspace: ws, Trim: o.Trim, Ephemeral: o.Ephemeral, KeepDenials: o.KeepDenials})
	if err != nil {
		return nil, err
	}
	a := &storeAdapter{s: st}
	o.OpenStore = func(context.Context, string, harness.StoreOptions) (harness.SessionStore, error) { return a, nil }
	return func() { a.Close() }, nil
}

// storeAdapter is a *sessionstore.Store as the Runtime's SessionStore;
// closing twice is harmless.
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

func (a *storeAdapter) Close() error {
	a.once.Do(func() { a.err = a.s.Close() })
	return a.err
}
