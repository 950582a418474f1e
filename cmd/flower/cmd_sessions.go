package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/sessionstore"
)

var flagSessionsTrimmed = &cli.BoolFlag{Name: "trimmed", Usage: "show exactly what a resume would send (expired, trimmed, pruned, repaired)", EnvVars: []string{"FLOWER_TRIMMED"}}

// sessionFlags are the store's location and the resume policies, spelled as
// in `flower step`, so `sessions show --trimmed` previews that step's resume.
var sessionFlags = []cli.Flag{flagStepRunDir, flagStepWorkspace, flagStepTrim, flagStepNoEphemeral, flagStepKeepDenials}

func init() {
	register(&cli.Command{
		Name:  "sessions",
		Usage: "inspect and move the session store (<run-dir>/sessions.db)",
		Description: `Examples:
   flower sessions list
   flower sessions show 3f2a --trimmed --trim   # what a resume with --trim would send
   flower sessions report 3f2a                  # the trim report as JSON
   flower sessions import ~/.claude/projects    # adopt sessions run by hand
   flower sessions export 3f2a > s.jsonl`,
		Subcommands: []*cli.Command{
			{Name: "list", Usage: "list sessions, newest first", Flags: sessionFlags, Action: sessionsList},
			{Name: "show", Usage: "print a session's transcript as JSONL", ArgsUsage: "ID", Flags: append([]cli.Flag{flagSessionsTrimmed}, sessionFlags...), Action: sessionsShow},
			{Name: "report", Usage: "print what a resume's load pipeline does to a session, as JSON", ArgsUsage: "ID", Flags: sessionFlags, Action: sessionsReport},
			{Name: "import", Usage: "adopt a transcript JSONL file or a whole ~/.claude/projects folder", ArgsUsage: "PATH", Flags: sessionFlags, Action: sessionsImport},
			{Name: "export", Usage: "write a session's raw transcript as JSONL", ArgsUsage: "ID", Flags: sessionFlags, Action: sessionsExport},
		},
	})
}

// openSessionStore opens <run-dir>/sessions.db with the resume policies of
// the flags. Reading commands insist that the store exists.
func openSessionStore(c *cli.Context, create bool) (*sessionstore.Store, error) {
	path := filepath.Join(c.String(flagStepRunDir.Name), "sessions.db")
	if !create {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("no session store at %s (set --run-dir or FLOWER_RUN_DIR)", path)
		}
	}
	trim := sessionstore.DefaultTrimPolicy()
	trim.Enabled = c.Bool(flagStepTrim.Name)
	eph := sessionstore.DefaultEphemeralPolicy()
	eph.Enabled = !c.Bool(flagStepNoEphemeral.Name)
	prune := sessionstore.DefaultPrunePolicy()
	prune.KeepDenials = c.Int(flagStepKeepDenials.Name)
	ws, err := filepath.Abs(c.String(flagStepWorkspace.Name))
	if err != nil {
		return nil, err
	}
	return sessionstore.Open(path, sessionstore.WithWorkspace(ws), sessionstore.WithTrim(trim),
		sessionstore.WithEphemeral(eph), sessionstore.WithPrune(prune),
		sessionstore.WithLogf(func(f string, a ...any) { fmt.Fprintf(c.App.ErrWriter, "flower: "+f+"\n", a...) }))
}

// oneArg returns the single positional argument or a usage error.
func oneArg(c *cli.Context, what string) (string, error) {
	if c.NArg() != 1 {
		return "", usagef("%s needs exactly one %s", c.Command.FullName(), what)
	}
	return c.Args().First(), nil
}

func sessionsList(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("sessions list takes no arguments")
	}
	st, err := openSessionStore(c, false)
	if err != nil {
		return err
	}
	defer st.Close()
	refs, err := st.Sessions(c.Context)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tPROJECT\tENTRIES\tSUBAGENTS\tUPDATED")
	for _, r := range refs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\n", r.Key.SessionID, r.Key.ProjectKey, r.Entries, r.Subkeys,
			time.UnixMilli(r.MTime).Format(time.DateTime))
	}
	return tw.Flush()
}

// onSession opens the store, resolves the one ID argument (a prefix will
// do) and calls f with the session's key.
func onSession(c *cli.Context, f func(*sessionstore.Store, sessionstore.Key) error) error {
	id, err := oneArg(c, "session ID")
	if err != nil {
		return err
	}
	st, err := openSessionStore(c, false)
	if err != nil {
		return err
	}
	defer st.Close()
	key, err := st.Find(c.Context, id)
	if err != nil {
		return err
	}
	return f(st, key)
}

func sessionsShow(c *cli.Context) error {
	return onSession(c, func(st *sessionstore.Store, key sessionstore.Key) error {
		if !c.Bool(flagSessionsTrimmed.Name) {
			return st.Export(c.Context, key, c.App.Writer)
		}
		entries, _, err := st.Preview(c.Context, key)
		if err != nil {
			return err
		}
		return sessionstore.WriteJSONL(c.App.Writer, entries)
	})
}

func sessionsReport(c *cli.Context) error {
	return onSession(c, func(st *sessionstore.Store, key sessionstore.Key) error {
		_, rep, err := st.Preview(c.Context, key)
		if err != nil {
			return err
		}
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"session": key.SessionID, "project": key.ProjectKey, "report": rep})
	})
}

func sessionsExport(c *cli.Context) error {
	return onSession(c, func(st *sessionstore.Store, key sessionstore.Key) error {
		return st.Export(c.Context, key, c.App.Writer)
	})
}

func sessionsImport(c *cli.Context) error {
	path, err := oneArg(c, "PATH (a JSONL file or a projects folder)")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.String(flagStepRunDir.Name), 0o755); err != nil {
		return err
	}
	st, err := openSessionStore(c, true)
	if err != nil {
		return err
	}
	defer st.Close()
	n, err := st.Import(c.Context, path)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "imported %d entries from %s into %s\n", n, path, st.Path())
	return nil
}
