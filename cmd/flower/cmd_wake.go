package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/flow"
)

// wakeOptions are the options of `flower wake-state`.
type wakeOptions struct {
	Workspace, RunDir string
	Isolate, JSON     bool
	Args              []string
}

func newWakeStateCmd(e *cmdEnv) *cli.Command {
	o := &wakeOptions{}
	return &cli.Command{
		Name:  "wake-state",
		Usage: "what `flower` would find in a workspace (brief, goal, runs, sessions); writes nothing",
		Description: `Examples:
   flower wake-state
   flower wake-state -C ~/src/app --isolate --json | jq .wake`,
		Flags: []cli.Flag{workspaceFlag(&o.Workspace, "workspace `DIR` to look at"), runDirFlag(&o.RunDir), isolateFlag(&o.Isolate),
			jsonFlag(&o.JSON, "print one JSON object")},
		Action: func(c *cli.Context) error {
			o.Args = c.Args().Slice()
			return e.do(o, func() error { return runWakeState(e, o) })
		},
	}
}

func runWakeState(e *cmdEnv, o *wakeOptions) error {
	if len(o.Args) > 0 {
		return usagef("wake-state takes no arguments (use -C DIR)")
	}
	pl, err := resolvePlace(o.Workspace, o.RunDir)
	if err != nil {
		return err
	}
	w, err := flow.WakeState(pl.Workspace, flow.WakeStateOptions{RunDir: pl.RunDir, Isolate: o.Isolate})
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(e.Stdout, wakeOut(w))
	}
	return printWake(e, w)
}

// printWake shows the probe to a person.
func printWake(e *cmdEnv, w flow.Wake) error {
	verdict := "flower starts fresh here (no complete brief)"
	if w.Wake {
		verdict = "flower continues here (a complete brief is on disk)"
	}
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	_, err := fmt.Fprintf(e.Stdout, "%s\nworkspace  %s\nworkbench  %s\nbrief      %s  %s\ngoal       %s  %s\nruns       %d in %s\n",
		verdict, w.Workspace, w.Workbench, yes(w.HasBrief), w.BriefPath, yes(w.HasGoal), w.GoalPath, w.Runs, w.RunDir)
	return err
}
