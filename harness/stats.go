package harness

import (
	"time"
)

// RunTally counts what a run's events say about the guards and the
// resilience machinery.
type RunTally struct {
	Denials  int `json:"denials"`
	Spills   int `json:"spills"`
	Retries  int `json:"retries"`
	Handoffs int `json:"handoffs"`
}

// StepStats is the fold of one step's events (one Runtime.Run): what the
// status line shows while it runs and what its StepResult counts.
type StepStats struct {
	Name    string
	Started time.Time // the step_start event's time
	RunTally
	// CostUSD is every result's cost plus every handoff's writing round.
	CostUSD float64
	// Turns is every result's num_turns plus the main thread's model
	// messages since the last result (an attempt still running, or one
	// that ended without a result).
	Turns int
	// Context is the main thread's context level in tokens (mainContext);
	// a handoff's fresh session starts at 0.
	Context  int
	LastText string // the last main-thread text
	Ended    bool   // step_end seen
	OK       bool   // step_end's ok

	live map[string]bool // main-thread message ids since the last result
}

// Add folds one event of the step into s.
func (s *StepStats) Add(e Event) {
	if e.Kind == EventStepStart {
		*s = StepStats{Name: e.Step, Started: e.Time}
		return
	}
	if s.Name == "" {
		s.Name = e.Step
	}
	s.RunTally.add(e)
	switch e.Kind {
	case EventAssistant, EventToolUse:
		m, _ := e.Message()
		if !m.Main || m.Synthetic {
			return
		}
		if m.Text != "" {
			s.LastText = m.Text
		}
		if m.Context > 0 {
			s.Context = m.Context
		}
		if m.MessageID != "" && !s.live[m.MessageID] {
			if s.live == nil {
				s.live = map[string]bool{}
			}
			s.live[m.MessageID] = true
			s.Turns++
		}
	case EventInit: // a new attempt: the last one's messages stay counted
		s.live = nil
	case EventResult:
		r, _ := e.Result()
		s.Turns += r.NumTurns - len(s.live)
		s.live = nil
		s.CostUSD += r.CostUSD
	case EventHandoff:
		if h, _ := e.Handoff(); h.Phase == HandoffDone {
			s.CostUSD += h.CostUSD
			s.Context = 0
		}
	case EventStepEnd:
		end, _ := e.StepEnd()
		s.Ended, s.OK = true, end.OK
	}
}

// add counts e when it is a denial, a spill, a retry or a finished handoff.
func (t *RunTally) add(e Event) {
	switch e.Kind {
	case EventGuard:
		g, _ := e.Guard()
		switch {
		case g.Denied():
			t.Denials++
		case g.Spilled():
			t.Spills++
		}
	case EventRetry:
		t.Retries++
	case EventHandoff:
		if h, _ := e.Handoff(); h.Phase == HandoffDone {
			t.Handoffs++
		}
	}
}

// RunStats is the one fold of a run's events. The TTY status line and the
// end-of-run summary (live), `flower runs show` and the oracle's digest
// (from events.jsonl) and each StepResult's counters (per step) all read
// it, so they cannot disagree.
type RunStats struct {
	RunTally         // over the whole run
	CostUSD  float64 // over the whole run
	Steps    int     // steps ended
	Failed   int     // steps ended not ok
	Index    int     // the workflow step running now, from 1 (0: no workflow)
	Total    int     // the workflow's steps
	// Offline is the last probe's report while the API is unreachable
	// between attempts; nil once it answers again or a step starts.
	Offline *OfflineEvent
	Step    StepStats
}

// Add folds one event into the run's stats.
func (r *RunStats) Add(e Event) {
	r.RunTally.add(e)
	cost := r.Step.CostUSD
	if e.Kind == EventStepStart {
		cost = 0
	}
	r.Step.Add(e)
	r.CostUSD += r.Step.CostUSD - cost
	switch e.Kind {
	case EventStep:
		f, _ := e.FlowStep()
		r.Index, r.Total = f.Index+1, f.Total
	case EventStepStart, EventOnline:
		r.Offline = nil
	case EventOffline:
		o, _ := e.Offline()
		r.Offline = &o
	case EventStepEnd:
		r.Steps++
		if !r.Step.OK {
			r.Failed++
		}
	}
}

// Fold is the stats of a whole event stream (e.g. ReadEvents' result).
func Fold(events []Event) RunStats {
	var r RunStats
	for _, e := range events {
		r.Add(e)
	}
	return r
}
