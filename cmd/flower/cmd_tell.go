package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/flow"
)

// tellOptions are the options of `flower tell`.
type tellOptions struct {
	Workspace, RunDir string
	JSON              bool
	Args              []string // the words of the message
}

func newTellCmd(e *cmdEnv) *cli.Command {
	o := &tellOptions{}
	return &cli.Command{
		Name:      "tell",
		Usage:     "leave a message for the flow running in a workspace; the coordinator reads it at its next inbox check",
		ArgsUsage: `"message"`,
		Description: `Delivers the message to the inbox (mcp__flower__inbox) of the flow running in
the workspace, through that run's channel socket, and prints which run and step
received it. The Q&A log (问答记录.md) records it with its time. Exit 1 when no
flow is running there.

Examples:
   flower tell "also support multiplication"
   flower tell -C ~/src/app "don't touch the public API"`,
		Flags: []cli.Flag{workspaceFlag(&o.Workspace, "workspace `DIR` whose running flow gets the message"), runDirFlag(&o.RunDir),
			jsonFlag(&o.JSON, "print one JSON object")},
		Action: func(c *cli.Context) error {
			o.Args = c.Args().Slice()
			return e.do(o, func() error { return runTell(c.Context, e, o) })
		},
	}
}

func runTell(ctx context.Context, e *cmdEnv, o *tellOptions) error {
	msg := strings.TrimSpace(strings.Join(o.Args, " "))
	if msg == "" {
		return usagef(`tell needs a message: flower tell "…"`)
	}
	pl, err := resolvePlace(o.Workspace, o.RunDir)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	r, err := flow.Tell(ctx, pl.RunDir, pl.Workspace, msg)
	if errors.Is(err, flow.ErrNoFlow) {
		return fmt.Errorf("no flow is running in %s (run dir %s): start one with flower \"…\", or pass the running flow's -C/--run-dir", pl.Workspace, pl.RunDir)
	}
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(e.Stdout, toldJSON{Kind: "told", Run: r.Run, Step: r.Step, StepEN: stepEN(r.Step)})
	}
	step := r.Step
	switch en := stepEN(r.Step); {
	case step == "":
		step = "(between steps)"
	case en != step:
		step += " (" + en + ")"
	}
	_, err = fmt.Fprintf(e.Stdout, "delivered to run %s, step %s: the coordinator reads it at its next inbox check\n", r.Run, step)
	return err
}
