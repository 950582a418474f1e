package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
)

func init() {
	register(&cli.Command{
		Name:      "ask",
		Usage:     "ask the oracle about the newest run (read-only: nothing is written into that run)",
		ArgsUsage: `"question"`,
		Description: `The oracle reads the newest run's events and workbench and answers. It runs
as a run of its own in a temporary directory, so the run you ask about is
untouched — ask while it is still going.

Examples:
   flower ask "where are we?"
   flower ask --run-dir ~/runs "did the judge accept round 2?"`,
		Flags:  []cli.Flag{flagStepRunDir, flagStepClaude, flagStepHook, flagStepModel, flagStepJSON},
		Action: askOracle,
	})
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

func askOracle(c *cli.Context) error {
	question := strings.TrimSpace(strings.Join(c.Args().Slice(), " "))
	if question == "" {
		return usagef(`ask needs a question: flower ask "where are we?"`)
	}
	runDir := c.String(flagStepRunDir.Name)
	row, ok, err := harness.NewestRun(runDir)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("no runs in %s to ask about (set --run-dir or FLOWER_RUN_DIR)", runDir)
	}
	eventsPath := filepath.Join(runDir, row.Run, "events.jsonl")
	events, _, err := harness.ReadEvents(eventsPath)
	if err != nil {
		return err
	}
	wb := workbenchOf(row.Workspace)

	// The oracle's own run lives in a temporary run dir: nothing it does
	// (manifest row, events, session) lands in the run it reads.
	tmp, err := os.MkdirTemp("", "flower-ask-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ro := runtimeOptions(row.Workspace)
	ro.RunDir, ro.Claude, ro.HookPath = tmp, c.String(flagStepClaude.Name), c.String(flagStepHook.Name)
	ro.Portable, ro.NoStore, ro.SpillThreshold = false, true, 0
	ro.Workbench = wb
	rt, err := harness.New(c.Context, ro)
	if err != nil {
		return err
	}
	defer rt.Close()
	spec := flow.Oracle("", flow.RoleOptions{Model: c.String(flagStepModel.Name)})
	res, err := rt.Run(c.Context, spec, flow.AskPrompt(question, eventsPath, events, wb), harness.RunOptions{})
	if err != nil {
		return err
	}
	if c.Bool(flagStepJSON.Name) {
		return json.NewEncoder(c.App.Writer).Encode(res)
	}
	if !res.OK {
		return fmt.Errorf("the oracle failed: %s", res.Error)
	}
	fmt.Fprintln(c.App.Writer, strings.TrimSpace(res.Text))
	return nil
}
