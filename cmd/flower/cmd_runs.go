package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
)

// runsOptions are the options of `flower runs` and `flower runs show`.
type runsOptions struct {
	Workspace, RunDir, Store string
	JSON, Watch              bool
	Args                     []string
}

func newRunsCmd(e *cmdEnv) *cli.Command {
	lo, so := &runsOptions{}, &runsOptions{}
	flags := func(o *runsOptions) []cli.Flag {
		return []cli.Flag{workspaceFlag(&o.Workspace, wsUsageRuns), runDirFlag(&o.RunDir), storeFlag(&o.Store), jsonFlag(&o.JSON, "print JSON (one object or array)")}
	}
	return &cli.Command{
		Name:  "runs",
		Usage: "list runs, or show one: steps, results, costs, denials, spills, handoffs, sessions",
		Description: `Runs live with their workspace, in <workspace>/.flower/runs (or --run-dir).

Examples:
   flower runs                 # every run of this workspace, newest first
   flower runs -C ~/src/app --json
   flower runs show            # the newest run
   flower runs show 20261130-… --json`,
		Flags: flags(lo),
		Action: func(c *cli.Context) error {
			lo.Args = c.Args().Slice()
			return e.do(lo, func() error { return runRunsList(e, lo) })
		},
		Subcommands: []*cli.Command{{
			Name: "show", Usage: "show one run (default: the newest); --watch follows it until it ends", ArgsUsage: "[RUN]",
			Flags: append(flags(so), &cli.BoolFlag{Name: "watch", Aliases: []string{"w"}, Usage: "then follow the run's events until its flow ends (as kubectl get -w)", EnvVars: []string{"FLOWER_WATCH"}, Destination: &so.Watch}),
			Action: func(c *cli.Context) error {
				so.Args = c.Args().Slice()
				return e.do(so, func() error { return runRunsShow(c.Context, e, so) })
			},
		}},
	}
}

func unixTime(s float64) string {
	if s == 0 {
		return "-"
	}
	return time.Unix(int64(s), 0).Format(time.DateTime)
}

func runRunsList(e *cmdEnv, o *runsOptions) error {
	if len(o.Args) > 0 {
		return usagef("runs takes no arguments (did you mean: flower runs show %s?)", o.Args[0])
	}
	pl, err := resolvePlace(o.Workspace, o.RunDir)
	if err != nil {
		return err
	}
	rows, where, err := manifestRows(context.Background(), o.Store, pl.RunDir, e.Stderr)
	if err != nil {
		return err
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].StartedAt > rows[j].StartedAt }) // newest first, as sessions list
	if o.JSON {
		out := make([]runJSON, 0, len(rows))
		for _, r := range rows {
			j := runOut(r)
			if j.Altered = recordCheck(o.Store, pl.RunDir, r.Run); j.Altered != "" {
				j.Outcome, j.Verdict = outcomeAltered, ""
			}
			out = append(out, j)
		}
		return writeJSON(e.Stdout, out)
	}
	if len(rows) == 0 {
		fmt.Fprintf(e.Stdout, "no runs in %s\n", where)
		return nil
	}
	var t table
	t.row("RUN", "STARTED", "OUTCOME", "STEPS", "FAILED", "COST", "WORKSPACE")
	for _, r := range rows {
		failed, cost := runTotals(r)
		outcome, _ := runOutcome(r)
		if alt := recordCheck(o.Store, pl.RunDir, r.Run); alt != "" {
			outcome = outcomeAltered + ": " + alt
		}
		t.row(r.Run, unixTime(r.StartedAt), outcome, len(r.Results), failed, fmt.Sprintf("$%.4f", cost), r.Workspace)
	}
	return t.write(e.human(e.Stdout))
}

// findRun is the run named id among the runs of the store at u (u empty:
// the run dir's manifest), or the newest for "".
func findRun(u, dir, id string, warn io.Writer) (harness.ManifestRow, error) {
	rows, where, err := manifestRows(context.Background(), u, dir, warn)
	if err != nil {
		return harness.ManifestRow{}, err
	}
	if id == "" {
		newest, ok := newestRow(rows)
		if !ok {
			return harness.ManifestRow{}, fmt.Errorf("no runs in %s", where)
		}
		return newest, nil
	}
	for _, r := range rows {
		if r.Run == id {
			return r, nil
		}
	}
	return harness.ManifestRow{}, fmt.Errorf("no run %q in %s (flower runs lists them)", id, where)
}

// outcomeAltered is the outcome of a run whose record flower did not
// write as it stands (harness.RecordCheck): its own words are not shown.
const outcomeAltered = "altered"

// recordCheck verifies a run dir's record of run (a store's rows are
// not chained: ""); see harness.RecordCheck.
func recordCheck(store, runDir, run string) string {
	if store != "" {
		return ""
	}
	return harness.RecordCheck(runDir, run)
}

func jsonOutcome(outcome, altered string) string {
	if altered != "" {
		return outcomeAltered
	}
	return outcome
}

func runRunsShow(ctx context.Context, e *cmdEnv, o *runsOptions) error {
	if len(o.Args) > 1 {
		return usagef("runs show takes at most one RUN")
	}
	if o.Watch && o.JSON {
		return usagef("runs show --watch prints lines for people; drop --json (flower --json prints a running flow's events)")
	}
	pl, err := resolvePlace(o.Workspace, o.RunDir)
	if err != nil {
		return err
	}
	row, err := findRun(o.Store, pl.RunDir, strings.Join(o.Args, ""), e.Stderr)
	if err != nil {
		return err
	}
	eventsPath := filepath.Join(pl.RunDir, row.Run, "events.jsonl")
	watchFrom := eventsSize(pl.RunDir, row.Run) // read before the events, so --watch misses none
	events, skipped, err := harness.ReadEvents(eventsPath)
	if err != nil && (o.Store == "" || !errors.Is(err, fs.ErrNotExist)) { // a stored run's events stay on the machine that ran it
		fmt.Fprintf(e.Stderr, "flower: %s\n", userMessage(err))
	}
	tally := harness.Fold(events).RunTally
	_, total := runTotals(row)
	outcome, verdict := runOutcome(row)
	altered := recordCheck(o.Store, pl.RunDir, row.Run)
	if altered != "" {
		outcome, verdict = outcomeAltered+": "+altered, ""
		fmt.Fprintf(e.Stderr, "flower: warning: run %s's record was changed by something other than flower: %s\n", row.Run, altered)
	}
	denials, spills := guardRecords(events)
	if o.JSON {
		return writeJSON(e.Stdout, runDetailJSON{Kind: "run_detail", Run: row.Run, Workspace: row.Workspace,
			StartedAt: rfc3339(row.StartedAt), UpdatedAt: rfc3339(row.UpdatedAt), Outcome: jsonOutcome(outcome, altered), Altered: altered, Verdict: verdict,
			Events: eventsPath, EventCount: len(events), SkippedEvents: skipped, Tally: tally, Denials: denials, Spills: spills,
			CostUSD: total, Steps: stepResultsOut(row.Results), FlowEvents: flowEvents(events)})
	}
	zh := chineseLocale(e.Getenv)
	w := e.human(e.Stdout)
	fmt.Fprintf(w, "run        %s\nworkspace  %s\nstarted    %s\nupdated    %s\noutcome    %s\n", row.Run, row.Workspace,
		unixTime(row.StartedAt), unixTime(row.UpdatedAt), outcome)
	fmt.Fprintf(w, "guards     %s, %s\nresilience %s, %s\n", plural(tally.Denials, "denial"), plural(tally.Spills, "spill"),
		plural(tally.Retries, "retry|retries"), plural(tally.Handoffs, "handoff"))
	for _, d := range denials {
		who := ""
		if d.Agent != "" {
			who = ", a subagent"
		}
		fmt.Fprintf(w, "denied     %s in %s (%s guard%s): %s\n", d.Tool, stepLabel(d.Step, zh), d.Guard, who, clipWidth(d.Reason, 120))
	}
	for _, s := range spills {
		fmt.Fprintf(w, "spilled    %s output of %s to %s (%s)\n", s.Tool, stepLabel(s.Step, zh), s.Path, byteSize(s.Bytes))
	}
	fmt.Fprintf(w, "events     %s\n", eventsPath)
	for _, ev := range events {
		if l := flow.FlowEventLine(ev); l != "" {
			fmt.Fprintf(w, "flow       %s\n", l)
		}
	}
	fmt.Fprintln(w)
	var t table
	t.row("STEP", "OK", "ATTEMPTS", "TURNS", "COST", "SECONDS", "SESSION", "ERROR")
	for _, s := range row.Results {
		t.row(stepLabelBeside(s.Step, zh), s.OK, s.Attempts, s.NumTurns, fmt.Sprintf("$%.4f", s.CostUSD),
			fmt.Sprintf("%.1f", s.EndedAt-s.StartedAt), s.SessionID, clipWidth(s.Error, 60))
		for _, old := range s.Retired {
			t.row("  (retired)", "", "", "", "", "", old, "")
		}
	}
	t.write(w)
	fmt.Fprintf(w, "\ntotal cost $%.4f\n", total)
	if o.Watch {
		fmt.Fprintf(w, "\nwatching %s (Ctrl-C stops)\n", row.Run)
		return watchRun(ctx, w, o.Store, pl.RunDir, row, watchFrom, zh)
	}
	return nil
}

// flowEvents are the workflow's own events ("step", "task", "goal",
// "verdict") of a run, and the human channel's ("message", "question").
func flowEvents(events []harness.Event) []eventJSON {
	out := []eventJSON{}
	for _, ev := range events {
		if ev.Kind == "step" || ev.Kind == "task" || ev.Kind == "goal" || ev.Kind == harness.EventVerdict || ev.Kind == harness.EventMessage || ev.Kind == harness.EventQuestion {
			out = append(out, eventOut(ev))
		}
	}
	return out
}
