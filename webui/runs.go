package webui

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
)

// reviewSuffix marks a judge round's step (flow's goal guard names it
// step.Name + "-评审").
const reviewSuffix = "-评审"

// outcomes are the filters of the runs page, in the order shown.
var outcomes = []string{"achieved", "not yet", "unreachable", "interrupted", "failed", "running", "done"}

// runSummary is one line of the runs page (its texts made once, so a
// page of 1,000 runs calls no template function per line).
type runSummary struct {
	ID, Workspace, Outcome, Ask string
	Started                     time.Time
	Cost                        float64
	Duration                    time.Duration
	Rounds, Steps               int
	Href, When, CostText, Took  string
	Class                       string // the outcome's CSS class
}

// summaryKey names what a summary was read from: a row changes its
// UpdatedAt whenever it changes.
type summaryKey struct {
	run     string
	updated float64
	steps   int
	running int
}

// summary is s.summarize(r), kept while the row stays the same (a page of
// 1,000 runs reads each finished one once).
func (s *Server) summary(r harness.ManifestRow) runSummary {
	k := summaryKey{r.Run, r.UpdatedAt, len(r.Results), len(r.Running)}
	s.mu.Lock()
	sum, ok := s.sums[k]
	s.mu.Unlock()
	if ok {
		return sum
	}
	sum = s.summarize(r)
	s.mu.Lock()
	if len(s.sums) > 100_000 {
		clear(s.sums)
	}
	s.sums[k] = sum
	s.mu.Unlock()
	return sum
}

// summarize reads one manifest row: its outcome, its ask (the brief's
// goal, which the clarifier wrote from the ask), cost, duration, judge
// rounds and steps.
func (s *Server) summarize(r harness.ManifestRow) runSummary {
	sum := runSummary{ID: r.Run, Workspace: r.Workspace, Outcome: s.o.Reader.Outcome(r), Steps: len(r.Results),
		Started: unix(r.StartedAt)}
	end := r.UpdatedAt
	for _, st := range r.Results {
		sum.Cost += st.CostUSD
		if strings.Contains(st.Step, reviewSuffix) {
			sum.Rounds++
		}
		if sum.Ask == "" && st.Step == flow.ClarifyStepName && st.OK {
			sum.Ask = firstLine(flow.ParseBrief(st.Text).Goal)
		}
		end = max(end, st.EndedAt)
	}
	if sum.Ask == "" && len(r.Results) > 0 {
		sum.Ask = firstLine(r.Results[0].Text)
	}
	if r.StartedAt > 0 && end > r.StartedAt {
		sum.Duration = time.Duration((end - r.StartedAt) * float64(time.Second)).Round(time.Second)
	}
	sum.Href, sum.When, sum.CostText = "/run/"+url.PathEscape(r.Run), when(sum.Started), usd(sum.Cost)
	sum.Took, sum.Class = dur(sum.Duration), "o-"+strings.ReplaceAll(sum.Outcome, " ", "-")
	return sum
}

// runsData is the runs page.
type runsData struct {
	page
	Runs     []runSummary
	Outcome  string   // the filter ("" all)
	Outcomes []string // the filters
	Total    int
	Err      string
}

func (s *Server) runsPage(w http.ResponseWriter, r *http.Request) {
	d := runsData{page: s.frame("Runs"), Outcome: r.URL.Query().Get("outcome"), Outcomes: outcomes}
	rows, err := s.o.Reader.Rows(r.Context())
	if err != nil {
		d.Err = err.Error()
	}
	d.Total = len(rows)
	for _, row := range rows {
		sum := s.summary(row)
		if d.Outcome == "" || sum.Outcome == d.Outcome {
			d.Runs = append(d.Runs, sum)
		}
	}
	slices.SortStableFunc(d.Runs, func(a, b runSummary) int { return b.Started.Compare(a.Started) }) // newest first
	s.render(w, "runs.html", d)
}

// findRow is the run named id.
func (s *Server) findRow(r *http.Request, id string) (harness.ManifestRow, bool) {
	rows, err := s.o.Reader.Rows(r.Context())
	if err != nil {
		return harness.ManifestRow{}, false
	}
	for _, row := range rows {
		if row.Run == id {
			return row, true
		}
	}
	return harness.ManifestRow{}, false
}

func unix(s float64) time.Time {
	if s == 0 {
		return time.Time{}
	}
	return time.Unix(0, int64(s*1e9))
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > 120 {
		s = string(r[:120]) + "…"
	}
	return strings.TrimSpace(s)
}
