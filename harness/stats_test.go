package harness

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// eventsOf turns a recorded stream into the events the Runtime would
// record for one step: step_start, what the stream machine emits, step_end.
func eventsOf(t *testing.T, lines [][]byte) []Event {
	t.Helper()
	c := &clock{now: time.Unix(1_700_000_000, 0)}
	s := newMachine(c)
	evs := []Event{{Kind: EventStepStart, Step: "s", Time: c.now}}
	for _, l := range lines {
		if ev, emit, _ := s.line(l, c.step(10*time.Millisecond)); emit {
			ev.Step = "s"
			evs = append(evs, ev)
		}
	}
	return append(evs, Event{Kind: EventStepEnd, Step: "s", Time: c.step(time.Second), Data: map[string]any{"ok": true}})
}

// TestFold_RecordedStreams folds every recorded stream. The wants are read
// off the recordings by hand: turns and cost are the result line's, the
// context is the last main-thread usage (a subagent's and a synthetic
// message's never count), and the live turn count before the result is the
// main thread's distinct model messages.
func TestFold_RecordedStreams(t *testing.T) {
	type w struct {
		turns, liveTurns, context int
		cost                      float64
		lastText                  bool
	}
	want := map[string]w{
		"agent.jsonl":           {turns: 2, liveTurns: 2, context: 10, cost: 0.00056, lastText: true},
		"bash.jsonl":            {turns: 2, liveTurns: 2, context: 10, cost: 0.00028, lastText: true},
		"mirror.jsonl":          {turns: 2, liveTurns: 2, context: 10, cost: 0.00028, lastText: true},
		"plain.jsonl":           {turns: 1, liveTurns: 1, context: 1500, cost: 0.00504, lastText: true},
		"prompt-too-long.jsonl": {turns: 1, liveTurns: 0, context: 0, cost: 0},
		"retry-529.jsonl":       {turns: 1, liveTurns: 1, context: 10, cost: 0.00014, lastText: true},
		"api-529.jsonl":         {turns: 1, liveTurns: 0, context: 0, cost: 0},
		"tool-then-text.jsonl":  {turns: 2, liveTurns: 2, context: 4700, cost: 0.01244, lastText: true},
		// testdata/faults: claude's own words about a fault are synthetic,
		// so only the result's turn counts and no context is reported.
		"max-budget.jsonl": {turns: 1, liveTurns: 1, context: 100000, cost: 1.4},
		"max-turns.jsonl":  {turns: 2, liveTurns: 1, context: 10, cost: 0.00014},
	}
	for _, f := range []string{"drop-after-message-start", "stall"} {
		want[f+".jsonl"] = w{turns: 1, cost: 0.00014}
	}
	for _, f := range []string{"drop-mid-text", "drop-mid-tool-use", "http-400", "http-401", "http-403", "http-404", "http-413",
		"http-429-retry-after", "http-429", "http-500", "http-502", "http-503", "http-504", "http-529", "refused", "reset-before-headers"} {
		want[f+".jsonl"] = w{turns: 1}
	}
	seen := 0
	for path, lines := range recordedStreams(t) {
		w, ok := want[filepath.Base(path)]
		if !ok {
			t.Errorf("%s: a recording without a row in this table", path)
			continue
		}
		seen++
		t.Run(path, func(t *testing.T) {
			evs := eventsOf(t, lines)
			var live RunStats
			for _, e := range evs {
				if e.Kind == EventResult && live.Step.Turns != w.liveTurns {
					t.Errorf("turns before the result = %d, want %d", live.Step.Turns, w.liveTurns)
				}
				live.Add(e)
			}
			st := live.Step
			if st.Turns != w.turns || st.Context != w.context || math.Abs(st.CostUSD-w.cost) > 1e-9 || (st.LastText != "") != w.lastText {
				t.Errorf("step stats = turns %d, context %d, cost %v, last text %q; want %+v", st.Turns, st.Context, st.CostUSD, st.LastText, w)
			}
			if live.Steps != 1 || live.Failed != 0 || live.CostUSD != st.CostUSD || !st.Ended || !st.OK {
				t.Errorf("run stats = %+v", live)
			}
			// The same events read back from events.jsonl fold alike.
			if back := Fold(roundTrip(t, evs)); !sameStats(back, live) {
				t.Errorf("folded from events.jsonl:\n%+v\nlive:\n%+v", back, live)
			}
		})
	}
	if seen < len(want) {
		t.Errorf("%d of %d known recordings found", seen, len(want))
	}
}

// roundTrip writes events as the Runtime's events.jsonl and reads them back.
func roundTrip(t *testing.T, evs []Event) []Event {
	t.Helper()
	var buf bytes.Buffer
	for _, e := range evs {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(append(b, '\n'))
	}
	path := filepath.Join(t.TempDir(), "events.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	back, skipped, err := ReadEvents(path)
	if err != nil || skipped != 0 || len(back) != len(evs) {
		t.Fatalf("ReadEvents: %d events, %d skipped, %v", len(back), skipped, err)
	}
	return back
}

func sameStats(a, b RunStats) bool {
	a.Step.live, b.Step.live = nil, nil
	a.Step.Started, b.Step.Started = time.Time{}, time.Time{}
	return reflect.DeepEqual(a, b)
}

func ev(kind, step string, data map[string]any) Event {
	return Event{Kind: kind, Step: step, Data: data}
}

// TestFold_Run folds a run of two workflow steps with the resilience
// machinery and the guards at work: per step and for the whole run.
func TestFold_Run(t *testing.T) {
	evs := []Event{
		ev(EventStep, "a", map[string]any{"index": 0, "total": 2}),
		ev(EventStepStart, "a", nil),
		ev(EventGuard, "a", map[string]any{"guard": "whitelist", "decision": "deny", "tool": "Bash"}),
		ev(EventGuard, "a", map[string]any{"guard": "spill", "decision": "rewrite", "tool": "Bash"}),
		ev(EventGuard, "a", map[string]any{"guard": "ephemeral", "decision": "allow", "tool": "Bash"}),
		ev(EventResult, "a", map[string]any{"num_turns": 3, "cost_usd": 0.5, "is_error": true}),
		ev(EventRetry, "a", map[string]any{"attempt": 1, "kind": "retry"}),
		ev(EventOffline, "a", map[string]any{"host": "h:443", "error": "refused", "waited_s": 1}),
		ev(EventOnline, "a", map[string]any{"host": "h:443"}),
		ev(EventOffline, "a", map[string]any{"host": "h:443", "error": "dial tcp: refused", "gave_up": true}),
		ev(EventStepEnd, "a", map[string]any{"ok": false}),
		ev(EventStep, "b", map[string]any{"index": 1.0, "total": 2.0}), // as read back from JSON
		ev(EventStepStart, "b", nil),
		ev(EventResult, "b", map[string]any{"num_turns": 2, "cost_usd": 0.25}),
		ev(EventHandoff, "b", map[string]any{"phase": "near", "context": 900}),
		ev(EventHandoff, "b", map[string]any{"phase": "done", "cost_usd": 0.125}),
		ev(EventResult, "b", map[string]any{"num_turns": 1, "cost_usd": 0.0625}),
		ev(EventStepEnd, "b", map[string]any{"ok": true}),
	}
	var r RunStats
	var afterA RunStats
	for i, e := range evs {
		r.Add(e)
		if i == 10 {
			afterA = r
		}
	}
	a := afterA.Step
	if a.Name != "a" || a.Turns != 3 || a.CostUSD != 0.5 || a.RunTally != (RunTally{Denials: 1, Spills: 1, Retries: 1}) || a.OK ||
		afterA.Offline == nil || *afterA.Offline != (OfflineEvent{Host: "h:443", Error: "dial tcp: refused", GaveUp: true}) {
		t.Errorf("step a = %+v (offline %v)", a, afterA.Offline)
	}
	b := r.Step
	if b.Name != "b" || b.Turns != 3 || b.CostUSD != 0.4375 || b.RunTally != (RunTally{Handoffs: 1}) || !b.OK || r.Offline != nil {
		t.Errorf("step b = %+v (offline %v)", b, r.Offline)
	}
	if r.RunTally != (RunTally{Denials: 1, Spills: 1, Retries: 1, Handoffs: 1}) || r.CostUSD != 0.9375 || r.Steps != 2 || r.Failed != 1 || r.Index != 2 || r.Total != 2 {
		t.Errorf("run = %+v", r)
	}
	// Control: the fold of nothing is zero, so the wants above are the events'.
	if !reflect.DeepEqual(Fold(nil), RunStats{}) {
		t.Error("the fold of no events is not zero")
	}
}

// TestFold_Turns: the live count is the main thread's distinct model
// messages; a result replaces its attempt's live count by its num_turns; an
// attempt that ends without a result keeps what it did.
func TestFold_Turns(t *testing.T) {
	msg := func(id string, data map[string]any) Event {
		e := ev(EventAssistant, "s", data)
		e.Raw = json.RawMessage(`{"type":"assistant","message":{"id":"` + id + `","model":"m"}}`)
		return e
	}
	tests := []struct {
		name string
		evs  []Event
		want int
	}{
		{"one message in two lines", []Event{msg("m1", map[string]any{}), msg("m1", map[string]any{})}, 1},
		{"a subagent's message", []Event{msg("m1", map[string]any{}), msg("m2", map[string]any{"agent_id": "x"})}, 1},
		{"result replaces", []Event{msg("m1", nil), msg("m2", nil), ev(EventResult, "s", map[string]any{"num_turns": 5})}, 5},
		{"killed, then resumed", []Event{ev(EventInit, "s", nil), msg("m1", nil), ev(EventInit, "s", nil), msg("m2", nil),
			ev(EventResult, "s", map[string]any{"num_turns": 1})}, 2},
	}
	for _, tt := range tests {
		var s StepStats
		for _, e := range tt.evs {
			s.Add(e)
		}
		if s.Turns != tt.want {
			t.Errorf("%s: turns %d, want %d", tt.name, s.Turns, tt.want)
		}
	}
}

// TestMainContext is the one main-thread rule of the context gauge.
func TestMainContext(t *testing.T) {
	usage := `"usage":{"input_tokens":100,"cache_read_input_tokens":20,"cache_creation_input_tokens":3}`
	tests := []struct {
		line       string
		tokens     int
		main, ok   bool
		reportsCtx bool
	}{
		{`{"type":"assistant","parent_tool_use_id":null,"message":{"model":"m",` + usage + `}}`, 123, true, true, true},
		{`{"type":"assistant","message":{"model":"m",` + usage + `}}`, 123, true, true, true},
		{`{"type":"assistant","parent_tool_use_id":"toolu_1","message":{"model":"m",` + usage + `}}`, 0, false, false, false},
		{`{"type":"assistant","parent_tool_use_id":null,"agent_id":"a1","message":{"model":"m",` + usage + `}}`, 0, false, false, false},
		{`{"type":"assistant","message":{"model":"<synthetic>",` + usage + `}}`, 0, true, false, false},
		{`{"type":"assistant","message":{"model":"m"}}`, 0, true, false, false},
	}
	for _, tt := range tests {
		tokens, main, ok := mainContext([]byte(tt.line))
		if tokens != tt.tokens || main != tt.main || ok != tt.ok {
			t.Errorf("mainContext(%s) = %d %v %v, want %d %v %v", tt.line, tokens, main, ok, tt.tokens, tt.main, tt.ok)
		}
		// The stream machine records exactly that level, and the fold reads it.
		s := &stream{}
		e, _, _ := s.handle([]byte(tt.line), time.Now())
		var st StepStats
		st.Add(e)
		if m, _ := e.Message(); m.Main != tt.main || (st.Context != 0) != tt.reportsCtx || st.Context != tt.tokens {
			t.Errorf("%s: event %+v folds to context %d", tt.line, m, st.Context)
		}
	}
}

// TestAccessors: a payload decodes from a live event (Go ints) and from one
// read back (float64s) alike; another kind answers false.
func TestAccessors(t *testing.T) {
	for _, d := range []map[string]any{{"attempt": 2, "delay_s": 1.5, "kind": "retry"}, {"attempt": 2.0, "delay_s": 1.5, "kind": "retry"}} {
		r, ok := ev(EventRetry, "s", d).Retry()
		if !ok || r != (RetryEvent{Attempt: 2, DelayS: 1.5, Kind: "retry"}) {
			t.Errorf("Retry() of %v = %+v %v", d, r, ok)
		}
	}
	if _, ok := ev(EventRetry, "s", nil).Guard(); ok {
		t.Error("a retry decoded as a guard event")
	}
	if g, ok := ev(EventGuard, "s", map[string]any{"guard": "spill", "decision": 7}).Guard(); !ok || g.Guard != "spill" || g.Decision != "" {
		t.Errorf("a mistyped field: %+v %v", g, ok)
	}
}
