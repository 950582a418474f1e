package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/sessionstore"
)

// The readings of a run's record a person asks for first: how it ended,
// what the guards refused, where long outputs went, which step ran a
// session.

// Run outcomes, as `flower runs` shows them.
const (
	outcomeAchieved    = "achieved"
	outcomeNotYet      = "not yet"
	outcomeUnreachable = "unreachable"
	outcomeInterrupted = "interrupted"
	outcomeFailed      = "failed"
	outcomeDone        = "done"    // it ended well and had no judge (flower step, --no-goal)
	outcomeRunning     = "running" // a step is under way (or its flower died without a word)
)

var verdictOutcomes = map[string]string{flow.Achieved: outcomeAchieved, flow.NotYet: outcomeNotYet, flow.Unreachable: outcomeUnreachable}

// runOutcome is how a recorded run ended: a step under way is running; a
// last step that failed is failed (interrupted when a person or a signal
// stopped it); else the last review's verdict, if the run had a judge, or
// done. verdict is that review's state ("" without one).
func runOutcome(r harness.ManifestRow) (outcome, verdict string) {
	for _, s := range r.Results {
		if s.OK && strings.Contains(s.Step, reviewSuffix) {
			verdict = flow.RoundState(s) // the typed verdict; its Markdown decides nothing
		}
	}
	switch {
	case len(r.Running) > 0:
		return outcomeRunning, verdict
	case len(r.Results) == 0:
		return outcomeFailed, verdict // a run that recorded no step did nothing
	}
	if last := r.Results[len(r.Results)-1]; !last.OK {
		if interrupted(last.Error) {
			return outcomeInterrupted, verdict
		}
		return outcomeFailed, verdict
	}
	if o := verdictOutcomes[verdict]; o != "" {
		return o, verdict
	}
	return outcomeDone, verdict
}

func interrupted(err string) bool {
	err = strings.ToLower(err)
	return strings.Contains(err, "interrupt") || strings.Contains(err, "context canceled") || strings.Contains(err, "signal")
}

// denialJSON is one tool call a guard refused.
type denialJSON struct {
	Step   string `json:"step"`
	Guard  string `json:"guard"`
	Tool   string `json:"tool"`
	Agent  string `json:"agent_id"` // "" for the main thread
	Reason string `json:"reason"`   // what the model was told, its first line
}

// spillJSON is one long output the spill guard moved into the workbench.
type spillJSON struct {
	Step  string `json:"step"`
	Tool  string `json:"tool"`
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"` // the file's size now; -1 when it is gone
}

// guardRecords lists a run's denials and spills from its events, each
// denial with the reason claude handed the model (the tool_result of the
// refused call).
func guardRecords(events []harness.Event) (denials []denialJSON, spills []spillJSON) {
	denials, spills = []denialJSON{}, []spillJSON{}
	reasons := map[string]string{}
	for _, ev := range events {
		if ev.Kind != harness.EventToolResult {
			continue
		}
		gjson.GetBytes(ev.Raw, "message.content").ForEach(func(_, b gjson.Result) bool {
			if b.Get("type").String() == "tool_result" {
				reasons[b.Get("tool_use_id").String()] = firstLine(textOfContent(b.Get("content")))
			}
			return true
		})
	}
	for _, ev := range events {
		g, ok := ev.Guard()
		switch {
		case !ok:
		case g.Denied():
			reason := reasons[g.ToolUseID]
			if reason == "" {
				reason = "refused by the " + g.Guard + " guard"
			}
			denials = append(denials, denialJSON{Step: ev.Step, Guard: g.Guard, Tool: g.Tool, Agent: g.AgentID, Reason: reason})
		case g.Spilled():
			files, _ := g.Detail["files"].([]any)
			for _, f := range files {
				p, _ := f.(string)
				size := int64(-1)
				if st, err := os.Stat(p); err == nil {
					size = st.Size()
				}
				spills = append(spills, spillJSON{Step: ev.Step, Tool: g.Tool, Path: p, Bytes: size})
			}
		}
	}
	return denials, spills
}

// textOfContent flattens a tool_result's content: a string or text blocks.
func textOfContent(c gjson.Result) string {
	if c.Type == gjson.String {
		return c.String()
	}
	var parts []string
	c.ForEach(func(_, b gjson.Result) bool {
		parts = append(parts, b.Get("text").String())
		return true
	})
	return strings.Join(parts, "\n")
}

func firstLine(s string) string {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "Error:"))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// stepRef is the run and step a session belongs to.
type stepRef struct{ Run, Step string }

// sessionSteps maps every session id the runs in rows used (retired ones
// too) to its run and step.
func sessionSteps(rows []harness.ManifestRow) map[string]stepRef {
	out := map[string]stepRef{}
	for _, r := range rows {
		for _, s := range r.Results {
			for _, id := range append([]string{s.SessionID}, s.Retired...) {
				if id != "" {
					out[id] = stepRef{Run: r.Run, Step: s.Step}
				}
			}
		}
	}
	return out
}

// byteSize is n as a person reads it: 812 B, 12.3 KB, 4.0 MB.
func byteSize(n int64) string {
	switch {
	case n < 0:
		return "gone"
	case n < 1000:
		return plural(int(n), "byte")
	case n < 1000*1000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// manifestRows are the runs `flower runs` and `flower ask` read: every run
// recorded in the store at u, else (u empty) the run dir's manifest; where
// names the source. A run dir's steps whose flower died are marked first
// (RecoverRunDir); a damaged manifest is read around, with one warning on
// warn.
func manifestRows(ctx context.Context, u, runDir string, warn io.Writer) (rows []harness.ManifestRow, where string, err error) {
	if u == "" {
		path := filepath.Join(runDir, "manifest.json")
		rows, err := harness.ReadManifestAround(path)
		if errors.Is(err, harness.ErrManifestDamaged) {
			fmt.Fprintf(warn, "flower: warning: %v\n", err)
			return append(rows, eventOnlyRows(runDir, rows)...), runDir, nil
		}
		if err == nil && anyRunning(rows) {
			if n, rerr := harness.RecoverRunDir(runDir); rerr == nil && n > 0 {
				rows, err = harness.ReadManifest(path)
			}
		}
		return rows, runDir, err
	}
	st, err := sessionstore.OpenURL(ctx, u)
	if err != nil {
		return nil, "", err
	}
	defer st.Close()
	recs, err := st.Runs(ctx)
	if err != nil {
		return nil, "", err
	}
	for _, r := range recs {
		var row harness.ManifestRow
		if err := json.Unmarshal(r.Row, &row); err != nil {
			return nil, "", fmt.Errorf("run %s in %s: %w", r.Run, st.Path(), err)
		}
		rows = append(rows, row)
	}
	return rows, st.Path(), nil
}

// eventOnlyRows are the runs of runDir that a damaged manifest lost but
// whose events.jsonl is there: each listed with its id, its start (from
// the id, as harness.NewRunID makes it) and its last change (the events
// file's), so no run hides behind the damage.
func eventOnlyRows(runDir string, have []harness.ManifestRow) []harness.ManifestRow {
	known := map[string]bool{}
	for _, r := range have {
		known[r.Run] = true
	}
	entries, _ := os.ReadDir(runDir)
	var out []harness.ManifestRow
	for _, e := range entries {
		if !e.IsDir() || known[e.Name()] {
			continue
		}
		st, err := os.Stat(filepath.Join(runDir, e.Name(), "events.jsonl"))
		if err != nil {
			continue
		}
		row := harness.ManifestRow{Run: e.Name(), Results: []harness.StepResult{}, UpdatedAt: float64(st.ModTime().UnixMilli()) / 1000}
		if len(e.Name()) >= 15 {
			if t, err := time.Parse("20060102-150405", e.Name()[:15]); err == nil {
				row.StartedAt = float64(t.Unix())
			}
		}
		out = append(out, row)
	}
	return out
}

// anyRunning reports whether a row lists a step under way.
func anyRunning(rows []harness.ManifestRow) bool {
	for _, r := range rows {
		if len(r.Running) > 0 {
			return true
		}
	}
	return false
}

// newestRow is the row updated last (as harness.NewestRun picks it).
func newestRow(rows []harness.ManifestRow) (harness.ManifestRow, bool) {
	if len(rows) == 0 {
		return harness.ManifestRow{}, false
	}
	newest := rows[0]
	for _, r := range rows[1:] {
		if r.UpdatedAt >= newest.UpdatedAt {
			newest = r
		}
	}
	return newest, true
}
