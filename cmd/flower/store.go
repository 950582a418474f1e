package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/sessionstore"
)

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

// recordRunPatience bounds how long recordRun tries again while the store
// cannot be reached.
const recordRunPatience = 20 * time.Second

// putRunRetrying puts r, trying again with backoff for up to
// recordRunPatience while the store fails (a database restarting); a
// fenced store's refusal is final.
func putRunRetrying(ctx context.Context, st *sessionstore.Store, r sessionstore.RunRecord) error {
	end := time.Now().Add(recordRunPatience)
	for wait := 200 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		err := st.PutRun(ctx, r)
		if err == nil || errors.Is(err, sessionstore.ErrFenced) || time.Now().Add(wait).After(end) {
			return err
		}
		time.Sleep(wait)
	}
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
			err = putRunRetrying(context.WithoutCancel(ctx), st, sessionstore.RunRecord{Run: r.Run, StartedAt: r.StartedAt, Row: row})
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "flower: warning: run %s not recorded in %s: %v\n", rt.RunID(), st.Path(), err)
	}
}
