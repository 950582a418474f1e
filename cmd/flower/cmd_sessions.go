package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/sessionstore"
)

// sessionsOptions are the options of every `flower sessions` command; the
// resume policies (Trim, NoEphemeral, KeepDenials) only matter to show and
// report, the only ones that take them.
type sessionsOptions struct {
	Workspace, RunDir, Store   string
	Trim, NoEphemeral, Trimmed bool
	KeepDenials                int
	JSON                       bool
	Args                       []string
}

func newSessionsCmd(e *cmdEnv) *cli.Command {
	sub := func(name, usage, argsUsage string, policies bool, run func(context.Context, *cmdEnv, *sessionsOptions) error, extra ...func(*sessionsOptions) cli.Flag) *cli.Command {
		o := &sessionsOptions{KeepDenials: 1}
		flags := []cli.Flag{workspaceFlag(&o.Workspace, "workspace `DIR` whose session store to use (its .flower/runs/sessions.db)"), runDirFlag(&o.RunDir), storeFlag(&o.Store)}
		if policies {
			flags = append(flags, resumePolicyFlags(&o.Trim, &o.NoEphemeral, &o.KeepDenials)...)
		}
		for _, f := range extra {
			flags = append(flags, f(o))
		}
		return &cli.Command{Name: name, Usage: usage, ArgsUsage: argsUsage, Flags: flags, Action: func(c *cli.Context) error {
			o.Args = c.Args().Slice()
			return e.do(o, func() error { return run(c.Context, e, o) })
		}}
	}
	trimmed := func(o *sessionsOptions) cli.Flag {
		return &cli.BoolFlag{Name: "trimmed", Usage: "show exactly what a resume would send (expired, trimmed, pruned, repaired)", EnvVars: []string{"FLOWER_TRIMMED"}, Destination: &o.Trimmed}
	}
	js := func(o *sessionsOptions) cli.Flag { return jsonFlag(&o.JSON, "print JSON (one object or array)") }
	return &cli.Command{
		Name:  "sessions",
		Usage: "inspect and move the session store (--store, default <run-dir>/sessions.db)",
		Description: `Examples:
   flower sessions list
   flower sessions show 3f2a --trimmed --trim   # what a resume with --trim would send
   flower sessions report 3f2a                  # the trim report
   flower sessions import ~/.claude/projects    # adopt sessions run by hand
   flower sessions export 3f2a > s.jsonl
   flower sessions check                        # is sessions.db sound?`,
		Subcommands: []*cli.Command{
			sub("list", "list sessions, newest first", "", false, runSessionsList, js),
			sub("show", "print a session's transcript as JSONL (--json: one object)", "ID", true, runSessionsShow, trimmed, js),
			sub("report", "print what a resume's load pipeline does to a session", "ID", true, runSessionsReport, js),
			sub("import", "adopt a transcript JSONL file or a whole ~/.claude/projects folder", "PATH", false, runSessionsImport),
			sub("export", "write a session's raw transcript as JSONL", "ID", false, runSessionsExport),
			sub("check", "check the store's health (SQLite quick_check); exit 1 when it is damaged", "", false, runSessionsCheck),
		},
	}
}

// openSessionStore opens the store (--store, default <run-dir>/sessions.db)
// with o's resume policies. Reading commands insist that a store file
// exists.
func openSessionStore(ctx context.Context, e *cmdEnv, o *sessionsOptions, create bool) (*sessionstore.Store, error) {
	pl, err := resolvePlace(o.Workspace, o.RunDir)
	if err != nil {
		return nil, err
	}
	u := o.Store
	if u == "" {
		u = filepath.Join(pl.RunDir, "sessions.db")
		if create {
			if err := pl.prepare(); err != nil {
				return nil, err
			}
		} else if _, err := os.Stat(u); err != nil {
			return nil, &noStoreError{at: u, hint: dropInHint(e, u)}
		}
	}
	return e.OpenStore(ctx, u, harness.StoreOptions{Workspace: pl.Workspace, Trim: o.Trim, Ephemeral: !o.NoEphemeral, KeepDenials: o.KeepDenials,
		ReadOnly: !create})
}

// noStoreError says where the sessions were looked for and where else
// they may be.
type noStoreError struct{ at, hint string }

func (e *noStoreError) Error() string {
	return "no session store at " + e.at + " (set -C, --run-dir, FLOWER_RUN_DIR or --store)" + e.hint
}

// dropInHint points at flower claude's store when it is not the one looked
// at and exists: the two default to different places (a workspace's runs
// belong to it; flower claude runs in any folder).
func dropInHint(e *cmdEnv, looked string) string {
	u := filepath.Join(dropInRunDir(e.Getenv), "sessions.db")
	if _, err := os.Stat(u); err != nil || u == looked {
		return ""
	}
	return "; flower claude's sessions are in " + u + ": flower sessions list --store " + u
}

// runSessionsCheck reports whether the store is sound. A damaged one is
// left where it is: the next step moves it aside for a fresh store.
func runSessionsCheck(ctx context.Context, e *cmdEnv, o *sessionsOptions) error {
	if len(o.Args) > 0 {
		return usagef("sessions check takes no arguments")
	}
	st, err := openSessionStore(ctx, e, o, false)
	if err == nil {
		err = st.QuickCheck(ctx)
		st.Close()
	}
	if sessionstore.IsCorrupt(err) {
		return fmt.Errorf("the session store is damaged: %v (the next step moves it aside to sessions.db.corrupt-<time> and starts a fresh one; its sessions then start fresh)", err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(e.Stdout, "ok: the session store passed SQLite's quick_check")
	return nil
}

// oneArg returns the single positional argument or a usage error.
func oneArg(o *sessionsOptions, what string) (string, error) {
	if len(o.Args) != 1 {
		return "", usagef("needs exactly one %s, got %d arguments", what, len(o.Args))
	}
	return o.Args[0], nil
}

func runSessionsList(ctx context.Context, e *cmdEnv, o *sessionsOptions) error {
	if len(o.Args) > 0 {
		return usagef("sessions list takes no arguments")
	}
	st, err := openSessionStore(ctx, e, o, false)
	var none *noStoreError
	if errors.As(err, &none) { // nothing yet is no failure, as for runs: say where it looked
		if o.JSON {
			return writeJSON(e.Stdout, []sessionJSON{})
		}
		_, err = fmt.Fprintf(e.Stdout, "no sessions: %s\n", none.Error())
		return err
	}
	if err != nil {
		return err
	}
	defer st.Close()
	refs, err := st.Sessions(ctx)
	if err != nil {
		return err
	}
	pl, _ := resolvePlace(o.Workspace, o.RunDir) // checked by openSessionStore
	rows, _, _ := manifestRows(ctx, o.Store, pl.RunDir, io.Discard)
	steps := sessionSteps(rows)
	if o.JSON {
		out := make([]sessionJSON, 0, len(refs))
		for _, r := range refs {
			out = append(out, sessionOut(r, steps[r.Key.SessionID]))
		}
		return writeJSON(e.Stdout, out)
	}
	zh := chineseLocale(e.Getenv)
	var t table
	t.row("SESSION", "STEP", "RUN", "PROJECT", "ENTRIES", "SUBAGENTS", "UPDATED")
	for _, r := range refs {
		by, step := steps[r.Key.SessionID], "-"
		if by.Step != "" {
			step = stepLabel(by.Step, zh)
		}
		t.row(r.Key.SessionID, step, orDash(by.Run), r.Key.ProjectKey, r.Entries, r.Subkeys, time.UnixMilli(r.MTime).Format(time.DateTime))
	}
	return t.write(e.human(e.Stdout))
}

// onSession opens the store, resolves the one ID argument (a prefix will
// do) and calls f with the session's key.
func onSession(ctx context.Context, e *cmdEnv, o *sessionsOptions, f func(*sessionstore.Store, sessionstore.Key) error) error {
	id, err := oneArg(o, "session ID")
	if err != nil {
		return err
	}
	st, err := openSessionStore(ctx, e, o, false)
	if err != nil {
		return err
	}
	defer st.Close()
	key, err := st.Find(ctx, id)
	if err != nil {
		return err
	}
	return f(st, key)
}

func runSessionsShow(ctx context.Context, e *cmdEnv, o *sessionsOptions) error {
	return onSession(ctx, e, o, func(st *sessionstore.Store, key sessionstore.Key) error {
		if !o.Trimmed && !o.JSON {
			return st.Export(ctx, key, e.Stdout)
		}
		var entries []json.RawMessage
		var err error
		if o.Trimmed {
			entries, _, err = st.Preview(ctx, key)
		} else {
			var buf bytes.Buffer
			if err = st.Export(ctx, key, &buf); err == nil {
				entries, err = jsonlEntries(buf.Bytes())
			}
		}
		if err != nil {
			return err
		}
		if o.JSON {
			return writeJSON(e.Stdout, transcriptJSON{Kind: "transcript", SessionID: key.SessionID, Project: key.ProjectKey,
				Trimmed: o.Trimmed, Entries: orEmpty(entries)})
		}
		return sessionstore.WriteJSONL(e.Stdout, entries)
	})
}

func runSessionsReport(ctx context.Context, e *cmdEnv, o *sessionsOptions) error {
	return onSession(ctx, e, o, func(st *sessionstore.Store, key sessionstore.Key) error {
		_, rep, err := st.Preview(ctx, key)
		if err != nil {
			return err
		}
		if o.JSON {
			return writeJSON(e.Stdout, sessionReportJSON{Kind: "session_report", SessionID: key.SessionID, Project: key.ProjectKey, TrimReport: rep})
		}
		fmt.Fprintf(e.Stdout, "session %s (%s): what a resume would load\n", key.SessionID, key.ProjectKey)
		var t table
		for _, kv := range []struct {
			k string
			v int
		}{{"transcripts", rep.Transcripts}, {"entries", rep.Entries}, {"bytes in", rep.BytesIn}, {"bytes out", rep.BytesOut},
			{"expired", rep.Expired}, {"expired bytes", rep.ExpiredBytes}, {"trimmed", rep.Trimmed}, {"trimmed bytes", rep.TrimmedBytes},
			{"spill files", rep.SpillFiles}, {"pruned denials", rep.Pruned}, {"pruned lines", rep.PrunedLines}, {"repaired", rep.Repaired}} {
			t.row("  "+kv.k, kv.v)
		}
		return t.write(e.human(e.Stdout))
	})
}

// jsonlEntries splits a JSONL transcript into its entries.
func jsonlEntries(b []byte) ([]json.RawMessage, error) {
	var out []json.RawMessage
	for _, line := range bytes.Split(b, []byte("\n")) {
		if line = bytes.TrimSpace(line); len(line) == 0 {
			continue
		}
		if !json.Valid(line) {
			return nil, fmt.Errorf("a transcript line is not JSON: %.80s", line)
		}
		out = append(out, json.RawMessage(line))
	}
	return out, nil
}

func runSessionsExport(ctx context.Context, e *cmdEnv, o *sessionsOptions) error {
	return onSession(ctx, e, o, func(st *sessionstore.Store, key sessionstore.Key) error {
		return st.Export(ctx, key, e.Stdout)
	})
}

func runSessionsImport(ctx context.Context, e *cmdEnv, o *sessionsOptions) error {
	path, err := oneArg(o, "PATH (a JSONL file or a projects folder)")
	if err != nil {
		return err
	}
	st, err := openSessionStore(ctx, e, o, true)
	if err != nil {
		return err
	}
	defer st.Close()
	n, err := st.Import(ctx, path)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "imported %d entries from %s into %s\n", n, path, st.Path())
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
