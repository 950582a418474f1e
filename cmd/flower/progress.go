package main

import "context"
import "crypto/sha256"
import "encoding/hex"
import "errors"
import "fmt"
import "io"
import "os"
import "os/signal"
import "path/filepath"
import "strings"
import "sync"
import "syscall"
import "time"

import "github.com/flowerhq/flower/flow"
import "github.com/flowerhq/flower/harness"

// progress shows a run to a person (one live status line per step, a
// summary at the end) or to a pipeline (one JSON object per event, the
// outcome last).
type progress struct {
	w         io.Writer
	json      bool
	handoffAt int
	zh        bool // show the seed's step names, not English labels

	mu        sync.Mutex
	stats     harness.RunStats // the run so far; stats.Step is the run inside the workflow step
	inbox     int              // messages told (`flower tell`) the coordinator has not read yet
	lastPaint time.Time
}

func newProgress(w io.Writer, jsonOut bool, handoffAt int, zh bool) *progress {
	return &progress{w: w, json: jsonOut, handoffAt: handoffAt, zh: zh}
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
		st := p.stats.Step
		mark := "✓"
		if !st.OK {
			mark = "✗"
		}
		verdict := ""
		if v := flow.ParseVerdict(st.LastText); v.OK() && strings.Contains(st.Name, "评审") {
			verdict = " → " + v.State
		}
		fmt.Fprintf(p.w, "\r\033[K%s %s%s (%.1fs)\n", mark, p.line(), verdict, e.Time.Sub(st.Started).Seconds())
	case harness.EventStepStart, harness.EventOffline, harness.EventOnline:
		p.paint()
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

// paint redraws the status line in place.
func (p *progress) paint() {
	p.lastPaint = time.Now()
	fmt.Fprintf(p.w, "\r\033[K%s", p.line())
}

// line is the status line of the step running now, all from the fold.
func (p *progress) line() string {
	st := p.stats.Step
	gauge := ""
	if p.handoffAt > 0 {
		gauge = fmt.Sprintf(" · ctx %d%%", st.Context*100/p.handoffAt)
	}
	s := fmt.Sprintf("[%d/%d] %s · %s · $%.4f%s", p.stats.Index, p.stats.Total, stepLabel(st.Name, p.zh), plural(st.Turns, "turn"), st.CostUSD, gauge)
	s += tallyNotes(st.RunTally)
	if o := p.stats.Offline; o != nil {
		s += " · " + offlineNote(*o)
	}
	if p.inbox > 0 {
		s += fmt.Sprintf(" · ✉ %d message(s) waiting for the coordinator", p.inbox)
	}
	return s
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
		fmt.Fprintf(p.w, "  %s\n", clipWidth(userMessage(errors.New(r.Error)), 200))
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
	fmt.Fprintf(p.w, "\n%s — $%.4f in %.0fs%s\n", status, o.CostUSD, o.Seconds, tallyNotes(p.stats.RunTally))
	for _, x := range [][2]string{{"brief", o.Brief}, {"goal", o.Goal}, {"verdict", o.Verdict}, {"workbench", o.Workbench}, {"events", o.Events}} {
		if x[1] != "" {
			fmt.Fprintf(p.w, "  %-9s %s\n", x[0], x[1])
		}
	}
	if o.Unread > 0 {
		fmt.Fprintf(p.w, "  %-9s %d told message(s) never reached the coordinator (they are in the Q&A log): tell them again on the next run\n", "unread", o.Unread)
	}
}

// interruptible handles Ctrl-C for a run. At a terminal the first Ctrl-C asks
// for the words to resume with and interrupts the running step with them
// (the seed's human interrupt); an empty line resumes without words (the
// step goes on as it was); a second Ctrl-C, or any Ctrl-C off a terminal,
// cancels the run, which stays resumable; SIGTERM and SIGHUP cancel it at
// once. The words come from lines, the
// terminal's one reader, which the channel's questions share: a question
// answered earlier cannot take them.
func interruptible(parent context.Context, rt *harness.Runtime, lines *flow.Lines, out io.Writer, tty bool) (context.Context, func()) {
	ctx, cancelCause := context.WithCancelCause(parent)
	cancel := func() { cancelCause(nil) }
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		asking := false
		words := make(chan string, 1)
		for {
			select {
			case <-done:
				return
			case s := <-sig:
				if !tty || asking || s != os.Interrupt {
					// The step's error names the signal (a hangup, say).
					cancelCause(fmt.Errorf("%w (%v signal received)", context.Canceled, s))
					return
				}
				asking = true
				fmt.Fprint(out, "\n[flower] interrupted. What should it do instead? (Enter to send; an empty line resumes without words; Ctrl-C again aborts)\n> ")
				go func() {
					line, _, _ := lines.ReadLine(ctx)
					words <- strings.TrimSpace(line)
				}()
			case w := <-words:
				asking = false
				if w == "" {
					fmt.Fprint(out, "[flower] no words: the step goes on as it was.\n")
					continue
				}
				rt.Interrupt(w)
			}
		}
	}()
	return ctx, func() { signal.Stop(sig); close(done); cancel() }
}

// selfTestKey identifies this claude and flower-hook (paths, sizes, times).
func selfTestKey(o harness.Options, getenv func(string) string) (claude, hook, key string, err error) {
	if claude, err = harness.FindClaude(o.Claude, getenv); err != nil {
		return "", "", "", err
	}
	if hook, err = harness.FindHook(o.HookPath); err != nil {
		return "", "", "", err
	}
	h := sha256.New()
	for _, p := range []string{claude, hook} {
		st, err := os.Stat(p)
		if err != nil {
			return "", "", "", err
		}
		fmt.Fprintf(h, "%s|%d|%d\n", p, st.Size(), st.ModTime().UnixNano())
	}
	return claude, hook, hex.EncodeToString(h.Sum(nil)), nil
}

// selfTestOnce runs the guard self-test unless this claude and flower-hook
// already passed it in this run dir. It writes nothing: stampSelfTest
// records the pass once the run dir is prepared.
func selfTestOnce(ctx context.Context, o harness.Options, getenv func(string) string) error {
	claude, hook, key, err := selfTestKey(o, getenv)
	if err != nil {
		return err
	}
	if b, err := os.ReadFile(filepath.Join(o.RunDir, "selftest.ok")); err == nil && strings.TrimSpace(string(b)) == key {
		return nil
	}
	return guardSelfTest(ctx, claude, hook)
}

// stampSelfTest records a passed self-test in the (existing) run dir.
func stampSelfTest(o harness.Options, getenv func(string) string) {
	if _, _, key, err := selfTestKey(o, getenv); err == nil {
		os.WriteFile(filepath.Join(o.RunDir, "selftest.ok"), []byte(key+"\n"), 0o600)
	}
}
