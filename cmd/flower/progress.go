package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
)

// progress shows a run to a person (one live status line per step, a
// summary at the end) or to a pipeline (one JSON object per event, the
// outcome last).
type progress struct {
	w         io.Writer
	json      bool
	v         view
	handoffAt int
	zh        bool // show the steps' Chinese names, not English labels

	mu        sync.Mutex
	stats     harness.RunStats // the run so far; stats.Step is the run inside the workflow step
	inbox     int              // messages told (`flower tell`) the coordinator has not read yet
	lastPaint time.Time
	// review is a finished review's line, held until its verdict event
	// says what the round came to (head "" when none is held).
	review struct{ head, rest string }
}

func newProgress(w io.Writer, v view, handoffAt int, zh bool) *progress {
	return &progress{w: w, json: v.json, v: v, handoffAt: handoffAt, zh: zh}
}

// event takes every Event of the run (it is the workflow's onEvent).
func (p *progress) event(e harness.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		writeJSON(p.w, eventOut(e))
		return
	}
	p.stats.Add(e)
	switch e.Kind {
	case harness.EventStepEnd:
		p.flushReview()
		st := p.stats.Step
		head, tail := p.lineParts()
		// What the step came to goes first: a narrow terminal clips the tail.
		rest := fmt.Sprintf(" (%.1fs) · %s", e.Time.Sub(st.Started).Seconds(), tail)
		if st.OK && strings.Contains(st.Name, "评审") {
			p.review.head, p.review.rest = head, rest // its verdict comes as the next event
			return
		}
		p.say(stepMarkOf(st.OK) + " " + head + rest)
	case harness.EventVerdict:
		if t, ok := flow.VerdictOf(e); ok && p.review.head != "" {
			mark, verdict := reviewMark(t.Verdict)
			p.say(mark + " " + p.review.head + verdict + p.review.rest)
			p.review.head = ""
		}
	case harness.EventGoal:
		if g, _ := e.Goal(); g.State == harness.GoalChanged {
			p.sayWrapped("⚠ " + flow.GoalEventLine(stepLabel(e.Step, p.zh), g))
			p.paint()
		}
	case harness.EventStepStart:
		p.flushReview()
		p.paint()
	case harness.EventOffline, harness.EventOnline:
		p.paint()
	case harness.EventMessage:
		// A told message the coordinator picked up: the person sees it was
		// read. (Questions show themselves where they are asked.)
		if c, ok := e.Channel(); ok && c.State == harness.MessageRead {
			p.say("✉ " + flow.ChannelEventLine(e.Kind, stepLabel(e.Step, p.zh), c))
			p.paint()
		}
	case harness.EventStall, harness.EventStore:
		if n := noticeLine(e); n != "" {
			fmt.Fprintf(p.w, "\r\033[K%s\n", n)
			p.paint()
		}
	case harness.EventAssistant, harness.EventToolUse, harness.EventResult, harness.EventRetry,
		harness.EventGuard, harness.EventHandoff:
		if time.Since(p.lastPaint) > 100*time.Millisecond {
			p.paint()
		}
	}
}

// stepMarkOf is a step's end mark: ✓ for a step that went well, ✗ for
// a failure.
func stepMarkOf(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}

// reviewMark is a review's end mark and verdict, from its verdict event
// (flower's decision, never the judge's Markdown): ✓ only for achieved, ○
// for not yet, ✗ for an unreachable goal.
func reviewMark(state string) (mark, verdict string) {
	switch state {
	case flow.Achieved:
		return "✓", " → " + state
	case flow.Unreachable:
		return "✗", " → " + state
	}
	return "○", " → " + flow.NotYet
}

// flushReview says a held review line that got no verdict event.
func (p *progress) flushReview() {
	if p.review.head != "" {
		p.say("✓ " + p.review.head + p.review.rest)
		p.review.head = ""
	}
}

// paint redraws the status line in place: at a terminal only, clipped one
// column short of its width so it never wraps (a wrapped line is not
// redrawn but stacked).
func (p *progress) paint() {
	p.lastPaint = time.Now()
	if !p.v.live || p.v.quiet {
		return
	}
	fmt.Fprintf(p.w, "\r\033[K%s", p.v.line(p.line(), 1))
}

// say prints one finished line of the human view over the status line
// (quiet prints none).
func (p *progress) say(s string) {
	if p.v.quiet {
		return
	}
	p.sayAlways(s)
}

// sayWrapped prints s whole, wrapped to the width (even when quiet: a
// warning).
func (p *progress) sayWrapped(s string) {
	p.sayAlways(strings.Join(p.v.wrap(s), "\n"))
}

// sayAlways is say even when quiet: the outcome.
func (p *progress) sayAlways(s string) {
	prefix := ""
	if p.v.live {
		prefix = "\r\033[K"
	}
	for _, l := range strings.Split(s, "\n") {
		fmt.Fprintf(p.w, "%s%s\n", prefix, p.v.markColor(p.v.line(l, 0)))
		prefix = ""
	}
}

// line is the status line of the step running now, all from the fold.
func (p *progress) line() string {
	head, tail := p.lineParts()
	return head + " · " + tail
}

// lineParts are the status line's step ("[2/3] goal") and the rest.
func (p *progress) lineParts() (head, tail string) {
	st := p.stats.Step
	gauge := ""
	if p.handoffAt > 0 {
		gauge = fmt.Sprintf(" · ctx %d%%", st.Context*100/p.handoffAt)
	}
	head = fmt.Sprintf("[%d/%d] %s", p.stats.Index, p.stats.Total, stepLabel(st.Name, p.zh))
	s := fmt.Sprintf("%s · $%.4f%s", plural(st.Turns, "turn"), st.CostUSD, gauge)
	s += tallyNotes(st.RunTally)
	if o := p.stats.Offline; o != nil {
		s += " · " + offlineNote(*o)
	}
	if p.inbox > 0 {
		s += fmt.Sprintf(" · ✉ %d message(s) waiting for the coordinator", p.inbox)
	}
	return head, s
}

// tallyNotes are a tally's non-zero counts, each after " · ".
func tallyNotes(t harness.RunTally) string {
	s := ""
	for _, x := range []struct {
		n    int
		what string
	}{{t.Retries, "retry|retries"}, {t.Denials, "denied|denied"}, {t.Spills, "spilled|spilled"}, {t.Handoffs, "handoff"}} {
		if x.n > 0 {
			s += " · " + plural(x.n, x.what)
		}
	}
	return s
}

// inboxWaiting is the channel's OnInbox: the status line shows how many
// told messages wait until the coordinator's next inbox check.
func (p *progress) inboxWaiting(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inbox = n
	if !p.json {
		p.paint()
	}
}

// stepDone closes a step's status line with its outcome.
func (p *progress) stepDone(s flow.Step, r harness.StepResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		return
	}
	if !r.OK && r.Error != "" {
		p.say("  " + clipWidth(userMessage(errors.New(r.Error)), 200))
	}
}

// finish prints the outcome: a JSON line, or a summary for a person.
func (p *progress) finish(o flowOutcome) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		writeJSON(p.w, flowResultOut(o))
		return
	}
	p.flushReview()
	status := "done"
	switch {
	case o.OK:
	case o.ExitCode == exitInterrupted:
		status = "interrupted"
	case o.FailedStep != "":
		status = "failed at step " + stepLabel(o.FailedStep, p.zh) // its error is printed above
	default:
		status = userMessage(errors.New(o.Error))
	}
	p.say("")
	p.sayAlways(fmt.Sprintf("%s — $%.4f in %.0fs%s", status, o.CostUSD, o.Seconds, tallyNotes(p.stats.RunTally)))
	verdict := o.Verdict
	if o.VerdictReason != "" {
		verdict += ": " + o.VerdictReason
	}
	if o.Verdict != "" {
		p.sayWrappedLine(fmt.Sprintf("  %-9s %s", "verdict", verdict))
	}
	for _, x := range [][2]string{{"brief", o.Brief}, {"goal", o.Goal}, {"workbench", o.Workbench}, {"events", o.Events}} {
		if x[1] != "" {
			p.sayPath(x[0], relPath(x[1]))
		}
	}
	if o.Unread > 0 {
		fmt.Fprintf(p.w, "  %-9s %d told message(s) never reached the coordinator (they are in the Q&A log): tell them again on the next run\n", "unread", o.Unread)
	}
}

// sayWrappedLine prints s wrapped at spaces to the width, unless quiet.
func (p *progress) sayWrappedLine(s string) {
	if !p.v.quiet {
		p.sayWrapped(s)
	}
}

// sayPath prints a summary line whose value is a path, never clipped: the
// summary exists to show where things are. When "  label path" is wider
// than the terminal, the label stands alone and the path follows in pieces
// of the width, each on its own line, nothing added in between, so the
// lines put together give the path back.
func (p *progress) sayPath(label, path string) {
	line := fmt.Sprintf("  %-9s %s", label, path)
	w := p.v.width()
	if p.v.quiet {
		return
	}
	if w <= 4 || runewidth.StringWidth(line) <= w {
		p.say(line)
		return
	}
	p.say("  " + label)
	for _, piece := range widthPieces(path, w) {
		p.say(piece)
	}
}

// widthPieces cuts s into pieces of at most w columns each.
func widthPieces(s string, w int) []string {
	var out []string
	piece, cols := "", 0
	for _, r := range s {
		rw := runewidth.RuneWidth(r)
		if cols+rw > w {
			out = append(out, piece)
			piece, cols = "", 0
		}
		piece += string(r)
		cols += rw
	}
	return append(out, piece)
}

// showAnswers wraps an answerer that answers without a person at the
// keyboard (a file, the demo) so that the human view shows each question
// and its answer; the terminal's own answerer shows them as it asks.
func (p *progress) showAnswers(a flow.Answerer) flow.Answerer {
	if _, term := a.(*flow.TerminalAnswers); a == nil || term || p.json {
		return a
	}
	return shownAnswers{a, p}
}

type shownAnswers struct {
	flow.Answerer
	p *progress
}

// Instant is the wrapped answerer's (the channel asks it whether to wait).
func (s shownAnswers) Instant() bool {
	in, ok := s.Answerer.(interface{ Instant() bool })
	return ok && in.Instant()
}

func (s shownAnswers) Answer(ctx context.Context, q flow.Question) (string, bool, error) {
	a, ok, err := s.Answerer.Answer(ctx, q)
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	lines := "? " + strings.Join(strings.Fields(q.Text), " ")
	if len(q.Options) > 0 {
		lines += "\n  options: " + strings.Join(q.Options, " | ")
	}
	switch {
	case err == nil && ok:
		lines += "\n> " + strings.Join(strings.Fields(a), " ")
	default:
		lines += "\n> (no answer)"
	}
	if !s.p.v.quiet {
		for _, l := range strings.Split(lines, "\n") {
			s.p.sayWrapped(l)
		}
	}
	return a, ok, err
}

// announceWake says at the top of a woken run what flower found and what
// it does with it.
func (p *progress) announceWake(wf *flow.Workflow, ask string) {
	if n := wf.Context.Woke(); n == 0 || p.json || wf.Workbench == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	notes := wf.Workbench.Notes()
	what := "no new words: the goal is derived from the brief again"
	if ask != "" {
		what = "your words are added to the brief and the goal is derived again"
	}
	p.say("waking the work: found the brief " + relPath(filepath.Join(notes, flow.DefaultBriefName)) + ", so clarify is skipped; " + what)
}

// relPath is p relative to the current folder when it lies inside it: the
// view's lines stay short and still name the file.
func relPath(p string) string {
	wd, err := os.Getwd()
	if err != nil || !filepath.IsAbs(p) {
		return p
	}
	if r, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}
