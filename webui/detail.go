package webui

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/internal/mdsections"
)

// stepView is one step of the timeline.
type stepView struct {
	Name, Label, Role, Model, Session, Error string
	OK, Running                              bool
	Turns, Attempts                          int
	Cost                                     float64
	Duration                                 time.Duration
	Why                                      []string // each failed attempt's error, each retry's reason
	Context, Peak, At                        int      // tokens: at the end, the peak, the handoff level
	Handoffs                                 []string
	Judge                                    *judgeView
}

// Pct is a context level as a share of the handoff level, for the gauge.
func (s stepView) Pct(n int) int {
	if s.At <= 0 {
		return 0
	}
	return min(100, n*100/s.At)
}

// judgeView is one judge round: the typed verdict when the round recorded
// one, and the verdict as the judge wrote it.
type judgeView struct {
	State, Reason string
	Failed        []string
	Checks        []checkView
	Typed         bool
	Markdown      string
}

type checkView struct {
	Check, Evidence string
	Passed          bool
}

// docView is a workspace document: the brief, the goal, the Q&A log, a
// handoff note.
type docView struct {
	Name, Path, Text string
}

// spillView is a spill with the link that shows it.
type spillView struct {
	Spill
	Size, Link string
}

// runData is the one-run page.
type runData struct {
	page
	Run                 runSummary
	Live                bool
	Tampered            string
	Steps               []stepView
	Denials             []Denial
	Spills              []spillView
	Brief, Log          *docView
	Goal                *docView
	GoalSHA, GoalDisk   string
	GoalChanged         bool
	Notes               []docView
	Events, EventsError string
	From                int64 // the events' length the page shows: where its live stream starts
	Status              string
	CanTell             bool   // a live flow and a Tell: the page shows the tell form
	Msg                 string // what the last tell did
}

// detail reads everything the run page shows.
func (s *Server) detail(row harness.ManifestRow) runData {
	d := runData{page: s.frame("Run " + row.Run), Run: s.summarize(row), Live: s.liveRow(row)}
	if s.o.Reader.Verify != nil {
		if err := s.o.Reader.Verify(s.o.RunDir, row.Run); err != nil {
			d.Tampered = err.Error()
		}
	}
	d.Events = filepath.Join(s.o.RunDir, row.Run, "events.jsonl")
	if st, err := os.Stat(d.Events); err == nil {
		d.From = st.Size() // measured before the read: the stream starts here and misses nothing
	}
	events, _, err := harness.ReadEvents(d.Events)
	if err != nil {
		d.EventsError = "no events here (" + err.Error() + "): a stored run's events stay on the machine that ran it"
	}
	d.Steps = s.steps(row, events)
	denials, spills := s.o.Reader.Guards(events)
	d.Denials = denials
	for _, sp := range spills {
		d.Spills = append(d.Spills, spillView{Spill: sp, Size: byteSize(sp.Bytes),
			Link: "/run/" + url.PathEscape(row.Run) + "/spill/" + url.PathEscape(filepath.Base(sp.Path))})
	}
	d.docs(row, events)
	d.Status = statusLine(s.o.Reader.Label, events)
	return d
}

// steps are the timeline: each recorded step, then the ones under way.
func (s *Server) steps(row harness.ManifestRow, events []harness.Event) []stepView {
	at := harness.HandoffPolicy{}.At()
	byStep := map[string][]harness.Event{}
	for _, ev := range events {
		byStep[ev.Step] = append(byStep[ev.Step], ev)
	}
	var out []stepView
	for _, r := range row.Results {
		v := stepView{Name: r.Step, Label: s.o.Reader.Label(r.Step), Role: role(r.Step), Session: r.SessionID, Error: r.Error,
			OK: r.OK, Turns: r.NumTurns, Attempts: r.Attempts, Cost: r.CostUSD, Context: r.Context, Peak: r.Context, At: at,
			Duration: time.Duration((r.EndedAt - r.StartedAt) * float64(time.Second)).Round(100 * time.Millisecond), Why: r.Errors}
		v.fold(byStep[r.Step])
		if strings.Contains(r.Step, reviewSuffix) {
			v.Judge = judge(r.Text, byStep[r.Step])
		}
		out = append(out, v)
	}
	for _, run := range row.Running {
		v := stepView{Name: run.Step, Label: s.o.Reader.Label(run.Step), Role: role(run.Step), Running: true, At: at}
		v.fold(byStep[run.Step])
		out = append(out, v)
	}
	return out
}

// fold reads a step's events: its model, context peak, retries and
// handoffs (a step run twice, as a woken flow does, keeps the last run's).
func (v *stepView) fold(events []harness.Event) {
	var st harness.StepStats
	for _, ev := range events {
		st.Add(ev)
		switch ev.Kind {
		case harness.EventInit:
			if in, ok := ev.Init(); ok && in.Model != "" {
				v.Model = in.Model
			}
		case harness.EventAssistant, harness.EventToolUse:
			if m, ok := ev.Message(); ok && m.Main {
				v.Peak = max(v.Peak, m.Context)
			}
		case harness.EventRetry:
			if r, ok := ev.Retry(); ok {
				v.Why = append(v.Why, "retry "+r.Kind+": "+r.Error)
			}
		case harness.EventHandoff:
			if h, ok := ev.Handoff(); ok && h.Phase == harness.HandoffDone {
				v.Handoffs = append(v.Handoffs, "handed off at "+tokens(h.Context)+" to a fresh session ("+h.Path+")")
			}
		}
	}
	if v.Running {
		v.Turns, v.Cost, v.Context = st.Turns, st.CostUSD, st.Context
		if !st.Started.IsZero() {
			v.Duration = time.Since(st.Started).Round(time.Second)
		}
	}
	v.Peak = max(v.Peak, v.Context)
}

// judge is a judge round's verdict: typed fields from the round's events
// when it recorded them (verdict, checks, failed, reason), and the
// Markdown verdict parsed as flow reads it.
func judge(text string, events []harness.Event) *judgeView {
	pv := flow.ParseVerdict(text)
	j := &judgeView{State: pv.State, Reason: pv.Reason, Failed: pv.Failed, Markdown: text}
	for _, ev := range events {
		if ev.Data == nil || (ev.Data["checks"] == nil && ev.Data["verdict"] == nil) {
			continue
		}
		j.Typed = true
		if v, ok := ev.Data["verdict"].(string); ok && v != "" {
			j.State = v
		}
		if v, ok := ev.Data["reason"].(string); ok && v != "" {
			j.Reason = v
		}
		if f, ok := ev.Data["failed"].([]any); ok {
			j.Failed = strs(f)
		}
		j.Checks = nil
		cs, _ := ev.Data["checks"].([]any)
		for _, c := range cs {
			m, _ := c.(map[string]any)
			check, _ := m["check"].(string)
			passed, _ := m["passed"].(bool)
			evidence, _ := m["evidence"].(string)
			j.Checks = append(j.Checks, checkView{Check: check, Passed: passed, Evidence: evidence})
		}
	}
	return j
}

func strs(in []any) []string {
	var out []string
	for _, x := range in {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// docs reads the workspace's brief, goal (with its frozen hash against
// the file's), Q&A log (questions, answers, messages told) and handoff
// notes.
func (d *runData) docs(row harness.ManifestRow, events []harness.Event) {
	if row.Workspace == "" {
		return
	}
	notes := filepath.Join(row.Workspace, ".flower", "notes")
	read := func(name string) *docView {
		p := filepath.Join(notes, name)
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		return &docView{Name: name, Path: p, Text: string(b)}
	}
	d.Brief, d.Log = read(flow.DefaultBriefName), read(flow.DefaultLogName)
	d.Goal = read(flow.DefaultGoalName)
	for _, ev := range events {
		if g, ok := ev.Goal(); ok && g.State == harness.GoalFrozen {
			d.GoalSHA = g.SHA256
			if d.Goal == nil || filepath.Base(g.Path) != d.Goal.Name {
				d.Goal = read(filepath.Base(g.Path))
			}
		}
	}
	if d.Goal != nil && d.GoalSHA != "" {
		text, err := mdsections.Read(d.Goal.Path)
		sum := sha256.Sum256([]byte(text))
		d.GoalDisk = hex.EncodeToString(sum[:])
		d.GoalChanged = err != nil || d.GoalDisk != d.GoalSHA
	}
	paths, _ := filepath.Glob(filepath.Join(notes, "交接-*.md"))
	sort.Strings(paths)
	for _, p := range paths {
		if n := read(filepath.Base(p)); n != nil {
			d.Notes = append(d.Notes, *n)
		}
	}
}

// role is what a step's session was: the starter flow's steps by name.
func role(step string) string {
	base, _, _ := strings.Cut(step, "#")
	switch {
	case strings.HasSuffix(base, reviewSuffix):
		return "judge"
	case base == flow.ClarifyStepName:
		return "clarifier"
	case base == flow.GoalStepName:
		return "goal setter"
	case base == flow.WorkStepName || base == flow.CoordinatorName:
		return "coordinator"
	}
	return "step"
}

// runPage serves a run's page with template name: "run.html", or
// "runbody", the body alone, which a live page swaps in.
func (s *Server) runPage(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		row, ok := s.findRow(r, r.PathValue("id"))
		if !ok {
			http.Error(w, "flower ui: no such run (the runs page lists them)", http.StatusNotFound)
			return
		}
		d := s.detail(row)
		d.CanTell, d.Msg = d.Live && s.o.Reader.Tell != nil, r.URL.Query().Get("msg")
		s.render(w, name, d)
	}
}

// tell hands the form's message to the run's flow (POST, token and Origin
// checked by ServeHTTP) and goes back to the run's page saying where it
// landed.
func (s *Server) tell(w http.ResponseWriter, r *http.Request) {
	row, ok := s.findRow(r, r.PathValue("id"))
	msg := strings.TrimSpace(r.FormValue("message"))
	if !ok || s.o.Reader.Tell == nil || msg == "" {
		http.Error(w, "flower ui: nothing to tell (a running flow and a message)", http.StatusBadRequest)
		return
	}
	said := "told"
	if step, err := s.o.Reader.Tell(r.Context(), row.Workspace, msg); err != nil {
		said = err.Error()
	} else if step != "" {
		said = "told; it reaches the coordinator in " + s.o.Reader.Label(step)
	}
	http.Redirect(w, r, "/run/"+url.PathEscape(row.Run)+"?msg="+url.QueryEscape(said), http.StatusSeeOther)
}

// byteSize is n as a person reads it.
func byteSize(n int64) string {
	switch {
	case n < 0:
		return "gone"
	case n < 1000:
		return itoa(int(n)) + " B"
	case n < 1000*1000:
		return ftoa(float64(n)/1000) + " KB"
	}
	return ftoa(float64(n)/1e6) + " MB"
}

func tokens(n int) string {
	if n >= 1000 {
		return itoa(n/1000) + "k tokens"
	}
	return itoa(n) + " tokens"
}
