package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/internal/wire"
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

// openStore opens the store at u with the given resume policies; warnings
// go to the command's stderr.
func openStore(ctx context.Context, c *cli.Context, u string, so harness.StoreOptions) (*sessionstore.Store, error) {
	return sessionstore.OpenURL(ctx, u, wire.StoreOptions(so, func(f string, a ...any) { fmt.Fprintf(c.App.ErrWriter, "flower: "+f+"\n", a...) })...)
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
	a := wire.Adapt(st)
	o.OpenStore = func(context.Context, string, harness.StoreOptions) (harness.SessionStore, error) { return a, nil }
	return func() { a.Close() }, nil
}
