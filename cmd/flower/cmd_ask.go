package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
)

// askOptions are the options of `flower ask`.
type askOptions struct {
	Workspace, RunDir, Claude, Hook, Model string
	Store, Sandbox                         string
	JSON                                   bool
	OnlineTimeout                          time.Duration
	Question                               []string
}

func newAskCmd(e *cmdEnv) *cli.Command {
	o := &askOptions{}
	return &cli.Command{
		Name:      "ask",
		Usage:     "ask the oracle about the newest run (read-only: nothing is written into that run)",
		ArgsUsage: `"question"`,
		Description: `The oracle reads the newest run's events and workbench and answers. It runs
as a run of its own in a temporary directory, so the run you ask about is
untouched — ask while it is still going.

Examples:
   flower ask "where are we?"
   flower ask -C ~/src/app "did the judge accept round 2?"`,
		Flags: []cli.Flag{workspaceFlag(&o.Workspace, wsUsageRuns), runDirFlag(&o.RunDir), storeFlag(&o.Store), claudeFlag(&o.Claude), hookFlag(&o.Hook), modelFlag(&o.Model),
			jsonFlag(&o.JSON, "print the oracle's step_result as JSON"), onlineTimeoutFlag(&o.OnlineTimeout), sandboxFlag(&o.Sandbox)},
		Action: func(c *cli.Context) error {
			o.Question = c.Args().Slice()
			return e.do(o, func() error { return runAsk(c.Context, e, o) })
		},
	}
}

// workbenchOf finds a run workspace's workbench wherever StarterFlow put it
// (plain or isolated), or nil.
func workbenchOf(ws string) *harness.Workbench {
	for _, iso := range []bool{false, true} {
		wb := flow.WorkbenchFor(ws, iso)
		if st, err := os.Stat(wb.Root()); err == nil && st.IsDir() {
			return wb
		}
	}
	return nil
}

func runAsk(ctx context.Context, e *cmdEnv, o *askOptions) error {
	question := strings.TrimSpace(strings.Join(o.Question, " "))
	if question == "" {
		return usagef(`ask needs a question: flower ask "where are we?"`)
	}
	pl, err := resolvePlace(o.Workspace, o.RunDir)
	if err != nil {
		return err
	}
	runDir := pl.RunDir
	rows, where, err := manifestRows(ctx, o.Store, runDir, e.Stderr)
	if err != nil {
		return err
	}
	row, ok := newestRow(rows)
	if !ok {
		return fmt.Errorf("no runs in %s to ask about (set -C, --run-dir, FLOWER_RUN_DIR or --store)", where)
	}
	eventsPath := filepath.Join(runDir, row.Run, "events.jsonl")
	events, _, err := harness.ReadEvents(eventsPath)
	if err != nil {
		return err
	}
	wb := workbenchOf(row.Workspace)

	// The oracle's own run lives in a temporary run dir: nothing it does
	// (manifest row, events, session) lands in the run it reads.
	// Ctrl-C cancels (so the temporary run dir goes with it).
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	tmp, err := os.MkdirTemp("", "flower-ask-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ro := runtimeOptions(row.Workspace)
	ro.RunDir, ro.Claude, ro.HookPath = tmp, o.Claude, o.Hook
	ro.Resilience.OnlineTimeout = o.OnlineTimeout
	ro.Portable, ro.NoStore, ro.SpillThreshold = false, true, 0
	ro.Workbench = wb
	if err := applySandbox(o.Sandbox, &ro, e.Stderr, e.SandboxCheck); err != nil {
		return err
	}
	rt, err := e.NewRuntime(ctx, ro)
	if err != nil {
		return err
	}
	defer rt.Close()
	spec := flow.Oracle("", flow.RoleOptions{Model: o.Model})
	res, err := rt.Run(ctx, spec, flow.AskPrompt(question, eventsPath, events, wb),
		harness.RunOptions{OnEvent: offlineStatus(e.Stderr, e.IsTTY(e.Stderr))}) // the offline state, as a step shows it
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(e.Stdout, stepResultOut(res))
	}
	if !res.OK {
		return fmt.Errorf("the oracle failed: %s", res.Error)
	}
	fmt.Fprintln(e.Stdout, strings.TrimSpace(res.Text))
	return nil
}
