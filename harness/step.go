package harness

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"
)

// stepRun is the state of one Run across its attempts.
type stepRun struct {
	spec    AgentSpec
	prompt  string // the step's own prompt (handoffs restate it)
	res     StepResult
	emit    func(Event)            // records an event of the step, then observes it
	observe func(Event)            // folds an event into stats, then calls OnEvent
	mu      sync.Mutex             // serialises observe: stream lines and socket reports
	stats   StepStats              // the fold of the step's events: res's counters
	next    attemptArgs            // what the next attempt runs
	warned  bool                   // handoff/near told, per generation
	attempt int                    // counted attempts (interrupts and handoffs not counted)
	begin   func() <-chan struct{} // lists the step as running (once); closed when written
	early   *earlyEnd              // the end row written while claude exited, if any
}

// earlyEnd is a step's end row written as soon as its result settled the
// outcome, while claude was still exiting.
type earlyEnd struct {
	res  StepResult
	seq  int // the manifest write's number
	err  error
	done chan struct{}
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

// decide is the step's decision over one attempt's typed outcome (seed
// Runtime.run's four exits). It is pure: everything it needs is passed in.
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

// Run runs one step (seed Runtime.run): attempts in a loop with four exits —
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
	st.emit(Event{Kind: EventStepStart, Data: map[string]any{"resume": o.Resume, "fork": o.Fork}})
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
		return r.endStep(st)
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
	st.begin = sync.OnceValue(func() <-chan struct{} { return r.stepBegins(step, st.res.StartedAt) })
	st.next = attemptArgs{spec: spec, prompt: prompt, step: step, resume: o.Resume, fork: o.Fork, resumeAt: o.ResumeAt,
		emit: st.emit, warned: &st.warned, handoff: r.opts.Handoff, settled: func(out attemptOut) { r.endEarly(st, out) },
		spawned: func() { st.begin() }}
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
	st.emit(Event{Kind: EventInterrupt, Data: map[string]any{"words": words, "session_id": st.res.SessionID}})
	st.resumeSession(words + "\n\n" + InterruptNote)
	st.attempt--
}

// resumeSession makes the next attempt continue this step's session with
// prompt.
func (st *stepRun) resumeSession(prompt string) {
	st.next.resume, st.next.fork, st.next.resumeAt = st.res.SessionID, false, ""
	st.next.prompt = prompt
}

// handOffStep retires the full session: its handoff document becomes the
// prompt of a fresh session; the attempt is not counted.
func (r *Runtime) handOffStep(ctx context.Context, st *stepRun, out attemptOut) {
	h := r.handOff(ctx, st.spec, st.res.Step, st.prompt, st.res.SessionID, out, st.emit)
	if st.res.SessionID != "" {
		st.res.Retired = append(st.res.Retired, st.res.SessionID)
	}
	st.res.SessionID = ""
	st.next.resume, st.next.fork, st.next.resumeAt = "", false, ""
	st.next.prompt = h.PromptBlock()
	st.warned = false
	st.attempt--
}

// backOff waits for the API and the back-off delay before a retry, which
// resumes the session when there is one. It reports false when the step
// must end instead (the API stayed unreachable, or ctx ended).
func (r *Runtime) backOff(ctx context.Context, st *stepRun, kind string, failure error) bool {
	rs := r.opts.Resilience
	delay := rs.DelayFor(st.attempt)
	st.emit(Event{Kind: EventRetry, Data: map[string]any{"attempt": st.attempt, "kind": kind, "error": failure.Error(), "delay_s": delay.Seconds()}})
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
// the step_end event, the Runtime's results and the manifest row. The row
// endEarly wrote while claude exited stands when the result is the same
// (its end time then counts) and no other write came in between.
func (r *Runtime) endStep(st *stepRun) (StepResult, error) {
	res := st.finished(st.res)
	if e := st.early; e != nil {
		<-e.done
		if res.EndedAt = e.res.EndedAt; reflect.DeepEqual(res, e.res) && e.err == nil && r.endsAsWritten(res, e.seq) {
			st.emit(Event{Kind: EventStepEnd, Data: map[string]any{"ok": res.OK, "error": res.Error, "session_id": res.SessionID, "attempts": res.Attempts}})
			return res, nil
		}
		res.EndedAt = unixNow()
	}
	st.emit(Event{Kind: EventStepEnd, Data: map[string]any{"ok": res.OK, "error": res.Error, "session_id": res.SessionID, "attempts": res.Attempts}})
	<-st.begin()
	// The store settles what the step's last lines wrote while the
	// manifest row is written, not after it (Close then has nothing left).
	r.checkpointSoon(context.Background())
	return res, r.stepEnds(res)
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

// endEarly writes the step's end row as soon as a clean success result
// settled the outcome (the attempt's settled), while claude still exits:
// the write then costs the step nothing. endStep checks it.
func (r *Runtime) endEarly(st *stepRun, out attemptOut) {
	e := &earlyEnd{res: st.finished(absorbed(st.res, out)), done: make(chan struct{})}
	st.early = e
	go func() {
		defer close(e.done)
		<-st.begin()
		e.seq, e.err = r.endsEarly(e.res)
	}()
}
