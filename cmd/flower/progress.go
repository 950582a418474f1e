package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
)

// progress shows a run to a person (one live status line per step, a
// summary at the end) or to a pipeline (one JSON object per event, the
// outcome last).
type progress struct {
	w         io.Writer
	json      bool
	handoffAt int
	zh        bool // show the seed's step names, not English labels

	mu        sync.Mutex
	step      string // the run inside the workflow step: the step, a judge round, a retry
	index     int
	total     int
	started   time.Time
	lastText  string
	turns     map[string]bool // assistant message ids of the main thread
	cost      float64
	context   int
	retries   int
	denials   int
	spills    int
	handoffs  int
	offline   string // while the API is unreachable: what and the next probe
	inbox     int    // messages told (`flower tell`) the coordinator has not read yet
	lastPaint time.Time
}

func newProgress(w io.Writer, jsonOut bool, handoffAt int, zh bool) *progress {
	return &progress{w: w, json: jsonOut, handoffAt: handoffAt, zh: zh, turns: map[string]bool{}}
}

// event takes every Event of the run (it is the workflow's onEvent).
func (p *progress) event(e harness.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		writeJSON(p.w, eventOut(e))
		return
	}
	switch e.Kind {
	case "step":
		p.index, p.total = toInt(e.Data["index"])+1, toInt(e.Data["total"])
		return
	case "step_start":
		p.step, p.started, p.lastText = e.Step, time.Now(), ""
		p.turns, p.cost, p.context = map[string]bool{}, 0, 0
		p.retries, p.denials, p.spills, p.handoffs = 0, 0, 0, 0
		p.offline = ""
	case "step_end":
		mark := "✓"
		if ok, _ := e.Data["ok"].(bool); !ok {
			mark = "✗"
		}
		verdict := ""
		if v := flow.ParseVerdict(p.lastText); v.OK() && strings.Contains(p.step, "评审") {
			verdict = " → " + v.State
		}
		fmt.Fprintf(p.w, "\r\033[K%s %s%s (%.1fs)\n", mark, p.line(), verdict, time.Since(p.started).Seconds())
		return
	case "assistant", "tool_use":
		if t, _ := e.Data["text"].(string); t != "" {
			p.lastText = t
		}
		raw := gjson.ParseBytes(e.Raw)
		if raw.Get("parent_tool_use_id").Type == gjson.Null {
			p.turns[raw.Get("message.id").String()] = true
			u := raw.Get("message.usage")
			if n := int(u.Get("input_tokens").Int() + u.Get("cache_read_input_tokens").Int() + u.Get("cache_creation_input_tokens").Int()); n > 0 {
				p.context = n
			}
		}
	case "result":
		p.cost = gjson.GetBytes(e.Raw, "total_cost_usd").Float()
	case "retry":
		p.retries++
	case "guard":
		switch {
		case e.Data["decision"] == "deny":
			p.denials++
		case e.Data["guard"] == "spill" && e.Data["decision"] == "rewrite":
			p.spills++
		}
	case "handoff":
		if e.Data["phase"] == "done" {
			p.handoffs++
		}
	case "offline", "online":
		p.offline = ""
		if e.Kind == "offline" {
			p.offline = offlineLine(e)
		}
		p.paint()
		return
	default:
		return
	}
	if time.Since(p.lastPaint) > 100*time.Millisecond || e.Kind == "step_start" {
		p.paint()
	}
}

// paint redraws the status line in place.
func (p *progress) paint() {
	p.lastPaint = time.Now()
	fmt.Fprintf(p.w, "\r\033[K%s", p.line())
}

func (p *progress) line() string {
	gauge := ""
	if p.handoffAt > 0 {
		gauge = fmt.Sprintf(" · ctx %d%%", p.context*100/p.handoffAt)
	}
	s := fmt.Sprintf("[%d/%d] %s · %s · $%.4f%s", p.index, p.total, stepLabel(p.step, p.zh), plural(len(p.turns), "turn"), p.cost, gauge)
	for _, x := range []struct {
		n    int
		what string
	}{{p.retries, "retry|retries"}, {p.denials, "denied|denied"}, {p.spills, "spilled|spilled"}, {p.handoffs, "handoff"}} {
		if x.n > 0 {
			s += " · " + plural(x.n, x.what)
		}
	}
	if p.offline != "" {
		s += " · " + p.offline
	}
	if p.inbox > 0 {
		s += fmt.Sprintf(" · ✉ %d message(s) waiting for the coordinator", p.inbox)
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
	fmt.Fprintf(p.w, "\n%s — $%.4f in %.0fs\n", status, o.CostUSD, o.Seconds)
	for _, x := range [][2]string{{"brief", o.Brief}, {"goal", o.Goal}, {"verdict", o.Verdict}, {"workbench", o.Workbench}, {"events", o.Events}} {
		if x[1] != "" {
			fmt.Fprintf(p.w, "  %-9s %s\n", x[0], x[1])
		}
	}
}

func toInt(v any) int {
	switch n := v.(type) {
	case float64:
		return int(n)
	case int:
		return n
	}
	return 0
}

// interruptible handles Ctrl-C for a run. At a terminal the first Ctrl-C asks
// for the words to resume with and interrupts the running step with them
// (the seed's human interrupt); an empty line resumes without words (the
// step goes on as it was); a second Ctrl-C, or any Ctrl-C off a terminal,
// cancels the run, which stays resumable. The words come from lines, the
// terminal's one reader, which the channel's questions share: a question
// answered earlier cannot take them.
func interruptible(parent context.Context, rt *harness.Runtime, lines *flow.Lines, out io.Writer, tty bool) (context.Context, func()) {
	ctx, cancel := context.WithCancel(parent)
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		asking := false
		words := make(chan string, 1)
		for {
			select {
			case <-done:
				return
			case s := <-sig:
				if !tty || asking || s == syscall.SIGTERM {
					cancel()
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
