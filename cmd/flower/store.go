package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/sessionstore"
)

// storeFlag names the session store every store-using command reads and
// writes: one SQLite file per run dir by default, or a database shared by
// many machines.
func storeFlag(dst *string) cli.Flag {
	return &cli.StringFlag{Name: "store", Usage: "session store `URL`: a file path, sqlite://PATH or postgres://… (default <run-dir>/sessions.db)", EnvVars: []string{"FLOWER_STORE"}, Destination: dst}
}

// withStore hands the Runtime of ho the store --store names, opened now,
// before anything is written, so a bad URL, an unreachable server or a
// missing database fails with one line and leaves no run behind. Without
// --store (u empty), ho keeps the default (<run-dir>/sessions.db) and st is
// nil. release closes the store if the Runtime never took it over.
func withStore(ctx context.Context, e *cmdEnv, u string, ho *harness.Options) (st *sessionstore.Store, release func(), err error) {
	if u == "" || ho.NoStore {
		return nil, func() {}, nil
	}
	ws, err := filepath.Abs(ho.Workspace)
	if err != nil {
		return nil, nil, err
	}
	st, err = e.OpenStore(ctx, u, harness.StoreOptions{Workspace: ws, Trim: ho.Trim, Ephemeral: ho.Ephemeral, KeepDenials: ho.KeepDenials})
	if err != nil {
		return nil, nil, err
	}
	ho.OpenStore = func(context.Context, string, harness.StoreOptions) (harness.SessionStore, error) { return st, nil }
	return st, func() { st.Close() }, nil
}

// recordRun copies the run's manifest row into a shared store (st nil: no
// --store, the run dir's manifest is the record), so `flower runs --store`
// lists runs from every machine. Call it before the Runtime closes the
// store; a failure is a warning, the run itself is done.
func recordRun(ctx context.Context, stderr io.Writer, st *sessionstore.Store, rt stepRunner) {
	if st == nil {
		return
	}
	rows, err := harness.ReadManifest(filepath.Join(rt.RunDir(), "manifest.json"))
	for _, r := range rows {
		if r.Run != rt.RunID() || err != nil {
			continue
		}
		row, mErr := json.Marshal(r)
		if mErr == nil {
			err = st.PutRun(context.WithoutCancel(ctx), sessionstore.RunRecord{Run: r.Run, StartedAt: r.StartedAt, Row: row})
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "flower: warning: run %s not recorded in %s: %v\n", rt.RunID(), st.Path(), err)
	}
}

// manifestRows are the runs `flower runs` and `flower ask` read: every run
// recorded in the store at u, else (u empty) the run dir's manifest; where
// names the source. A run dir's steps whose flower died are marked first
// (RecoverRunDir); a damaged manifest is read around, with one warning on
// warn.
func manifestRows(ctx context.Context, u, runDir string, warn io.Writer) (rows []harness.ManifestRow, where string, err error) {
	if u == "" {
		path := filepath.Join(runDir, "manifest.json")
		rows, err := harness.ReadManifestAround(path)
		if errors.Is(err, harness.ErrManifestDamaged) {
			fmt.Fprintf(warn, "flower: warning: %v\n", err)
			return rows, runDir, nil
		}
		if err == nil && anyRunning(rows) {
			if n, rerr := harness.RecoverRunDir(runDir); rerr == nil && n > 0 {
				rows, err = harness.ReadManifest(path)
			}
		}
		return rows, runDir, err
	}
	st, err := sessionstore.OpenURL(ctx, u)
	if err != nil {
		return nil, "", err
	}
	defer st.Close()
	recs, err := st.Runs(ctx)
	if err != nil {
		return nil, "", err
	}
	for _, r := range recs {
		var row harness.ManifestRow
		if err := json.Unmarshal(r.Row, &row); err != nil {
			return nil, "", fmt.Errorf("run %s in %s: %w", r.Run, st.Path(), err)
		}
		rows = append(rows, row)
	}
	return rows, st.Path(), nil
}

// anyRunning reports whether a row lists a step under way.
func anyRunning(rows []harness.ManifestRow) bool {
	for _, r := range rows {
		if len(r.Running) > 0 {
			return true
		}
	}
	return false
}

// newestRow is the row updated last (as harness.NewestRun picks it).
func newestRow(rows []harness.ManifestRow) (harness.ManifestRow, bool) {
	if len(rows) == 0 {
		return harness.ManifestRow{}, false
	}
	newest := rows[0]
	for _, r := range rows[1:] {
		if r.UpdatedAt >= newest.UpdatedAt {
			newest = r
		}
	}
	return newest, true
}
