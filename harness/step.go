package harness

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flowerhq/flower/internal/textclip"
)

// stepRun is the state of one Run across its attempts.
type stepRun struct {
	spec    AgentSpec
	prompt  string // the step's own prompt (handoffs restate it)
	res     StepResult
	emit    func(Event)     // records an event of the step, then observes it
	observe func(Event)     // folds an event into stats, then calls OnEvent
	mu      sync.Mutex      // serialises observe: stream lines and socket reports
	stats   StepStats       // the fold of the step's events: res's counters
	next    attemptArgs     // what the next attempt runs
	warned  bool            // handoff/near told, per generation
	attempt int             // counted attempts (interrupts and handoffs not counted)
	begun   <-chan struct{} // the running row's write, once the first claude is spawned
}

// next is what Run does after an attempt: decide's answer.
type next int

const (
	stepDone      next = iota // success, or a failure that ends the step
	stepResume                // a human interrupted: resume with the words
	stepHandoff               // the context is full: hand off to a fresh session
	stepRetry                 // a transient failure: wait, back off, resume
	stepExhausted             // the context is full again after MaxGenerations
)

// decide is the step's decision over one attempt's typed outcome (Run's
// four exits). It is pure: everything it needs is passed in.
func decide(err error, text string, cancelled bool, res StepResult, attempt int, hp HandoffPolicy, rs Resilience) (next, string) {
	switch {
	case err == nil || cancelled:
		return stepDone, ""
	case errors.Is(err, ErrInterrupted):
		if res.SessionID == "" {
			return stepDone, ""
		}
		return stepResume, ""
	case hp.Enabled && (errors.Is(err, ErrHandoffDue) || res.SessionID != "" && IsOverflow(err.Error(), text)):
		if len(res.Retired) >= hp.MaxGenerations {
			return stepExhausted, ""
		}
		return stepHandoff, ""
	}
	kind, retry := Classify(FailureOf(err))
	if !rs.Enabled || attempt >= rs.MaxAttempts || !retry {
		return stepDone, kind
	}
	return stepRetry, kind
}

// Run runs one step: attempts in a loop with four exits —
// success; human interrupt (resume with the words + InterruptNote, not
// counted); context full (handoff document, fresh session, not counted);
// retryable failure (classify, wait online, back off, resume). It then
// appends the result to the manifest.
//
// The error is non-nil only when the manifest cannot be written (the
// StepResult is complete all the same). Everything that goes wrong with the
// step itself — a bad spec, a claude that cannot start, an API error, a
// cancelled ctx — is a StepResult with OK false and Error set.
func (r *Runtime) Run(ctx context.Context, spec AgentSpec, prompt string, o RunOptions) (StepResult, error) {
	st := r.newStepRun(spec, prompt, o)
	defer r.watchStep(st.res.Step, st.observe)()
	st.emit(Event{Kind: EventStepStart, Data: EventData(StepStartEvent{Resume: o.Resume, Fork: o.Fork})})
	for {
		st.attempt++
		out := r.attempt(ctx, st.next)
		st.absorb(out)
		n, kind := decide(out.err, out.text, ctx.Err() != nil, st.res, st.attempt, r.opts.Handoff, r.opts.Resilience)
		switch n {
		case stepResume:
			st.resumeWithWords(out.text)
			continue
		case stepHandoff:
			r.handOffStep(ctx, st, out)
			continue
		case stepRetry:
			if r.backOff(ctx, st, kind, out.err) {
				continue
			}
		case stepExhausted:
			st.res.Error = fmt.Sprintf("harness: context full again after %d handoffs (max_generations=%d): the task does not fit; split it into smaller steps or raise HandoffPolicy.MaxGenerations (last error: %s)",
				len(st.res.Retired), r.opts.Handoff.MaxGenerations, out.err.Error())
		}
		return r.endStep(ctx, st)
	}
}

// newStepRun names the step and builds the emitter that records every
// event; observe folds it into the step's stats and hands it to the
// caller's callback, one at a time (stream lines and socket reports arrive
// on different goroutines).
func (r *Runtime) newStepRun(spec AgentSpec, prompt string, o RunOptions) *stepRun {
	step := o.StepName
	if step == "" {
		step = spec.Name
	}
	if step == "" {
		step = "step"
	}
	st := &stepRun{spec: spec, prompt: prompt,
		res: StepResult{Step: step, StartedAt: unixNow(), Errors: []string{}, Retired: []string{}}}
	st.observe = func(ev Event) {
		st.mu.Lock()
		defer st.mu.Unlock()
		st.stats.Add(ev)
		if o.OnEvent != nil {
			o.OnEvent(ev)
		}
	}
	st.emit = func(ev Event) {
		ev.Step = step
		if ev.Time.IsZero() {
			ev.Time = time.Now()
		}
		r.events.write(ev)
		st.observe(ev)
	}
	st.next = attemptArgs{spec: spec, prompt: prompt, step: step, resume: o.Resume, fork: o.Fork, resumeAt: o.ResumeAt,
		own: o.ResumeOwn, emit: st.emit, warned: &st.warned, handoff: r.opts.Handoff, spawned: func() {
			if st.begun == nil {
				st.begun = r.row.begin(step, st.res.StartedAt)
			}
		}}
	return st
}

// watchStep routes socket reports of step to cb while the step runs; the
// returned function stops that.
func (r *Runtime) watchStep(step string, cb func(Event)) func() {
	r.mu.Lock()
	r.onEvents[step] = cb
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		delete(r.onEvents, step)
		r.mu.Unlock()
	}
}

// absorb adds one attempt's outcome to the step's result (its counters
// come from the step's stats: endStep).
func (st *stepRun) absorb(out attemptOut) { st.res = absorbed(st.res, out) }

func absorbed(res StepResult, out attemptOut) StepResult {
	if out.sessionID != "" {
		res.SessionID = out.sessionID
	}
	res.Structured = out.structured
	if out.err == nil {
		res.OK, res.Text, res.Error = true, out.text, ""
		return res
	}
	res.Errors = append(res.Errors, out.err.Error())
	res.Error = out.err.Error()
	if !errors.Is(out.err, ErrInterrupted) {
		res.Text = out.text
	}
	return res
}

// resumeWithWords resumes the session with the human's words and the
// InterruptNote; the interrupted attempt is not counted.
func (st *stepRun) resumeWithWords(words string) {
	st.emit(Event{Kind: EventInterrupt, Data: EventData(InterruptEvent{Words: words, SessionID: st.res.SessionID})})
	st.resumeSession(words + "\n\n" + InterruptNote)
	st.attempt--
}

// resumeSession makes the next attempt continue this step's session with
// prompt.
func (st *stepRun) resumeSession(prompt string) {
	st.next.resume, st.next.fork, st.next.resumeAt = st.res.SessionID, false, ""
	st.next.own = true // the step's own: one claude never wrote starts fresh
	st.next.prompt = prompt
}

// handOffStep retires the full session: its handoff document becomes the
// prompt of a fresh session; the attempt is not counted.
// A human's words that landed in the attempt that hands off (or in its
// writing round) follow the handoff into the fresh session's prompt.
func (r *Runtime) handOffStep(ctx context.Context, st *stepRun, out attemptOut) {
	retired := st.res.SessionID
	h, late := r.handOff(ctx, st.spec, st.res.Step, st.prompt, retired, out, st.emit)
	if retired != "" {
		st.res.Retired = append(st.res.Retired, retired)
	}
	st.res.SessionID = ""
	st.next.resume, st.next.fork, st.next.resumeAt = "", false, ""
	st.next.prompt = h.PromptBlock()
	if words := joinWords(out.words, late); words != "" {
		st.emit(Event{Kind: EventInterrupt, Data: EventData(InterruptEvent{Words: words, SessionID: retired})})
		st.next.prompt += "\n\n" + handoffInterruptNote + "\n\n" + words
	}
	st.warned = false
	st.attempt--
}

// joinWords joins the human's words of two interrupts (either may be
// empty, the same words are given once).
func joinWords(a, b string) string {
	switch {
	case a == "" || a == b:
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}

// handoffSpec is the spec of the round that writes the handoff: the
// budget is lifted (the handoff must get written), the turn limit stays:
// the round is asked not to call tools, so one turn suffices.
func handoffSpec(spec AgentSpec) AgentSpec {
	spec.MaxBudgetUSD = 0
	return spec
}

// handOff has the full session write its handoff (budget lifted, no UI
// events) or, on an overflow error, assembles the degraded one; writes it to
// <notes>/交接-<step>.md when there is a workbench. The done event carries
// the writing round's cost (its own stream is not recorded). late are the
// words of a human interrupt that landed in the writing round.
func (r *Runtime) handOff(ctx context.Context, spec AgentSpec, step, prompt, sessionID string, out attemptOut, emit func(Event)) (h Handoff, late string) {
	emit(Event{Kind: EventHandoff, Data: EventData(handoffWriting{Phase: HandoffWriting, SessionID: sessionID, Context: out.context})})
	var cost float64
	if !errors.Is(out.err, ErrHandoffDue) || sessionID == "" {
		h = DegradedHandoff(step, prompt, textclip.Runes(out.err.Error(), 200))
	} else {
		used := out.context
		p := strings.NewReplacer("{used}", strconv.Itoa(used), "{window}", strconv.Itoa(r.opts.Handoff.Window)).Replace(HandoffPrompt)
		w := r.attempt(ctx, attemptArgs{spec: handoffSpec(spec), prompt: p, step: step, resume: sessionID, emit: nil, handoff: HandoffPolicy{}})
		cost, late = w.cost, w.words
		h = ParseHandoff(w.text, step)
		if w.err != nil || !h.Complete() {
			why := ""
			if w.err != nil {
				why = w.err.Error()
			}
			if why == "" {
				why = "handoff incomplete, missing " + strings.Join(h.Missing(), ", ")
			}
			h = DegradedHandoff(step, prompt, textclip.Runes(why, 200))
		}
	}
	h.Step = step
	if wb := r.opts.Workbench; wb != nil {
		if err := h.write(wb.Notes(), r.red); err != nil {
			emit(Event{Kind: EventError, Data: EventData(ErrorEvent{Error: err.Error()})})
		}
	}
	emit(Event{Kind: EventHandoff, Data: EventData(handoffDone{Phase: HandoffDone, Degraded: h.Degraded, Path: h.Path, Sections: h.sections(),
		Retired: sessionID, CostUSD: cost})})
	return h, late
}

// backOff waits for the API and the back-off delay before a retry, which
// resumes the session when there is one. It reports false when the step
// must end instead (the API stayed unreachable, or ctx ended).
func (r *Runtime) backOff(ctx context.Context, st *stepRun, kind string, failure error) bool {
	rs := r.opts.Resilience
	delay := rs.DelayFor(st.attempt)
	st.emit(Event{Kind: EventRetry, Data: EventData(RetryEvent{Attempt: st.attempt, Kind: kind, Error: failure.Error(), DelayS: delay.Seconds()})})
	if err := r.waitOnline(ctx, st.emit); err != nil {
		st.res.Error = fmt.Sprintf("%s (the API stayed unreachable: %v)", failure.Error(), err)
		return false
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(delay):
	}
	if st.res.SessionID != "" {
		prompt := rs.ResumePrompt
		if prompt == "" {
			prompt = DefaultResumePrompt
		}
		st.resumeSession(prompt)
		st.res.Resumed = true
	}
	return true
}

// endStep records the finished step: its counters from the step's stats,
// the step_end event and the manifest row (after the running row, when
// one was written). Beside the row's write the store settles what the step
// wrote (two files, neither waits for the other's fsyncs); both are done
// when endStep returns.
func (r *Runtime) endStep(ctx context.Context, st *stepRun) (StepResult, error) {
	res := st.finished(st.res)
	st.emit(Event{Kind: EventStepEnd, Data: EventData(StepEndEvent{OK: res.OK, Error: res.Error, SessionID: res.SessionID, Attempts: res.Attempts})})
	var settled sync.WaitGroup
	settled.Go(func() { r.store.checkpoint(ctx) })
	defer settled.Wait()
	if st.begun != nil {
		<-st.begun
	}
	return res, r.row.end(res)
}

// finished is res with the step's counters, attempts and end time.
func (st *stepRun) finished(res StepResult) StepResult {
	st.mu.Lock()
	res.CostUSD, res.NumTurns, res.Context = st.stats.CostUSD, st.stats.Turns, st.stats.Context
	st.mu.Unlock()
	res.Attempts = max(st.attempt, 1)
	res.EndedAt = unixNow()
	return res
}
