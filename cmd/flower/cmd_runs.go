package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/harness"
)

func init() {
	register(&cli.Command{
		Name:  "runs",
		Usage: "list runs, or show one: steps, results, costs, denials, spills, handoffs, sessions",
		Description: `Examples:
   flower runs                 # every run in ./runs, newest last
   flower runs show            # the newest run
   flower runs show 20261130-… --json`,
		Flags:  []cli.Flag{flagStepRunDir},
		Action: runsList,
		Subcommands: []*cli.Command{{
			Name: "show", Usage: "show one run (default: the newest)", ArgsUsage: "[RUN]",
			Flags: []cli.Flag{flagStepRunDir, flagStepJSON}, Action: runsShow,
		}},
	})
}

func unixTime(s float64) string {
	if s == 0 {
		return "-"
	}
	return time.Unix(int64(s), 0).Format(time.DateTime)
}

func runsList(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("runs takes no arguments (did you mean: flower runs show %s?)", c.Args().First())
	}
	dir := c.String(flagStepRunDir.Name)
	rows, err := harness.ReadManifest(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		fmt.Fprintf(c.App.Writer, "no runs in %s\n", dir)
		return nil
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].StartedAt < rows[j].StartedAt })
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTARTED\tSTEPS\tFAILED\tCOST\tWORKSPACE")
	for _, r := range rows {
		failed, cost := 0, 0.0
		for _, s := range r.Results {
			cost += s.CostUSD
			if !s.OK {
				failed++
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t$%.4f\t%s\n", r.Run, unixTime(r.StartedAt), len(r.Results), failed, cost, r.Workspace)
	}
	return tw.Flush()
}

func runsShow(c *cli.Context) error {
	if c.NArg() > 1 {
		return usagef("runs show takes at most one RUN")
	}
	dir := c.String(flagStepRunDir.Name)
	rows, err := harness.ReadManifest(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return err
	}
	var row *harness.ManifestRow
	if id := c.Args().First(); id != "" {
		for i := range rows {
			if rows[i].Run == id {
				row = &rows[i]
			}
		}
		if row == nil {
			return fmt.Errorf("no run %q in %s (flower runs lists them)", id, dir)
		}
	} else {
		newest, ok, err := harness.NewestRun(dir)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("no runs in %s", dir)
		}
		row = &newest
	}
	events, skipped, err := harness.ReadEvents(filepath.Join(dir, row.Run, "events.jsonl"))
	if err != nil {
		fmt.Fprintf(c.App.ErrWriter, "flower: %v\n", err)
	}
	tally := harness.Tally(events)
	if c.Bool(flagStepJSON.Name) {
		return json.NewEncoder(c.App.Writer).Encode(map[string]any{"run": row, "tally": tally, "events": len(events), "skipped_events": skipped})
	}
	w := c.App.Writer
	fmt.Fprintf(w, "run        %s\nworkspace  %s\nstarted    %s\nupdated    %s\n", row.Run, row.Workspace, unixTime(row.StartedAt), unixTime(row.UpdatedAt))
	fmt.Fprintf(w, "guards     %d denials, %d spills\nresilience %d retries, %d handoffs\n", tally.Denials, tally.Spills, tally.Retries, tally.Handoffs)
	fmt.Fprintf(w, "events     %s\n\n", filepath.Join(dir, row.Run, "events.jsonl"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STEP\tOK\tATTEMPTS\tTURNS\tCOST\tSECONDS\tSESSION\tERROR")
	total := 0.0
	for _, s := range row.Results {
		total += s.CostUSD
		fmt.Fprintf(tw, "%s\t%v\t%d\t%d\t$%.4f\t%.1f\t%s\t%s\n", s.Step, s.OK, s.Attempts, s.NumTurns, s.CostUSD, s.EndedAt-s.StartedAt, s.SessionID, clipLine(s.Error, 60))
		for _, old := range s.Retired {
			fmt.Fprintf(tw, "  (retired)\t\t\t\t\t\t%s\t\n", old)
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "\ntotal cost $%.4f\n", total)
	return nil
}

func clipLine(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
