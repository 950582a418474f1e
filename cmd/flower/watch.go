package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/flowerhq/flower/fleet"
	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/webui"
)

// watchEvery is how often --watch looks for news: a new events line, a
// changed queue.
const watchEvery = 250 * time.Millisecond

// watchLine is one followed event as `runs show --watch` prints it ("" for
// the events it does not print: stream chatter, status ticks).
func watchLine(ev harness.Event, zh bool) string {
	label := stepLabel(ev.Step, zh)
	if l := flow.FlowEventLine(ev); l != "" {
		return l
	}
	switch ev.Kind {
	case harness.EventStepStart:
		return "▶ " + label
	case harness.EventStepEnd:
		end, _ := ev.StepEnd()
		if end.OK {
			return fmt.Sprintf("✓ %s (%s)", label, plural(end.Attempts, "attempt"))
		}
		return fmt.Sprintf("✗ %s: %s", label, clipWidth(end.Error, 120))
	case harness.EventResult:
		r, _ := ev.Result()
		return fmt.Sprintf("  %s: %s · $%.4f", label, plural(r.NumTurns, "turn"), r.CostUSD)
	case harness.EventGuard:
		g, _ := ev.Guard()
		switch {
		case g.Denied():
			return fmt.Sprintf("  denied %s in %s (%s guard)", g.Tool, label, g.Guard)
		case g.Spilled():
			return fmt.Sprintf("  spilled %s output of %s", g.Tool, label)
		}
	case harness.EventRetry:
		r, _ := ev.Retry()
		return fmt.Sprintf("  retry %s in %s: %s", r.Kind, label, clipWidth(r.Error, 100))
	case harness.EventHandoff:
		if h, _ := ev.Handoff(); h.Phase == harness.HandoffDone {
			return fmt.Sprintf("  %s handed off to a fresh session", label)
		}
	}
	return ""
}

// watchRun follows the run's events.jsonl from offset and prints each
// line worth a person's look until the flow is no longer under way (or
// ctx ends), then the run's outcome.
func watchRun(ctx context.Context, w io.Writer, store, runDir string, row harness.ManifestRow, offset int64, zh bool) error {
	path := filepath.Join(runDir, row.Run, "events.jsonl")
	tick := time.NewTicker(watchEvery)
	defer tick.Stop()
	for {
		evs, next := webui.ReadFrom(path, offset)
		offset = next
		for _, ev := range evs {
			if l := watchLine(ev, zh); l != "" {
				fmt.Fprintln(w, l)
			}
		}
		if len(evs) == 0 {
			r, err := findRun(store, runDir, row.Run, io.Discard)
			if err == nil && !webui.Live(runDir, r) {
				if more, _ := webui.ReadFrom(path, offset); len(more) == 0 {
					outcome, _ := runOutcome(r)
					_, err := fmt.Fprintf(w, "run %s ended: %s\n", r.Run, outcome)
					return err
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// eventsSize is the length of a run's events.jsonl now (0 when there is
// none): where --watch starts following.
func eventsSize(runDir, run string) int64 {
	st, err := os.Stat(filepath.Join(runDir, run, "events.jsonl"))
	if err != nil {
		return 0
	}
	return st.Size()
}

// watchQueue lists the queue again every watchEvery and prints each job
// whose line changed (every job the first time), as `kubectl get -w`
// does, until ctx ends.
func watchQueue(ctx context.Context, w io.Writer, f *fleet.Fleet) error {
	seen := map[int64]string{}
	tick := time.NewTicker(watchEvery)
	defer tick.Stop()
	fmt.Fprintf(w, "%-6s %-10s %-8s %-16s %-22s %-10s %s\n", "ID", "STATE", "ATTEMPT", "WORKER", "RUN", "VERDICT", "ASK")
	for {
		jobs, err := f.List(ctx)
		if err != nil && ctx.Err() == nil {
			return err
		}
		for _, j := range jobs {
			line := fmt.Sprintf("%-6d %-10s %-8d %-16s %-22s %-10s %s", j.ID, j.State, j.Attempt, dash(j.Worker), dash(j.Run), dash(j.Verdict), clipAsk(j.Ask))
			if seen[j.ID] != line {
				seen[j.ID] = line
				fmt.Fprintln(w, line)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
