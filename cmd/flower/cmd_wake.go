package main

import (
	"encoding/json"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/flow"
)

func init() {
	register(&cli.Command{
		Name:  "wake-state",
		Usage: "what `flower` would find in a workspace (brief, goal, runs, sessions), as JSON; writes nothing",
		Description: `Examples:
   flower wake-state
   flower wake-state -C ~/src/app --isolate | jq .wake`,
		Flags:  []cli.Flag{flagStepWorkspace, flagStepRunDir, flagIsolate},
		Action: wakeState,
	})
}

func wakeState(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("wake-state takes no arguments (use -C DIR)")
	}
	ws, err := filepath.Abs(c.String(flagStepWorkspace.Name))
	if err != nil {
		return err
	}
	w, err := flow.WakeState(ws, flow.WakeStateOptions{RunDir: c.String(flagStepRunDir.Name), Isolate: c.Bool(flagIsolate.Name)})
	if err != nil {
		return err
	}
	enc := json.NewEncoder(c.App.Writer)
	enc.SetIndent("", "  ")
	return enc.Encode(w)
}
