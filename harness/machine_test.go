package harness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// recordedStreams are every stream-json recording under harness/testdata
// and the module's testdata: files whose lines are all JSON objects with a
// "type".
func recordedStreams(t *testing.T) map[string][][]byte {
	t.Helper()
	out := map[string][][]byte{}
	for _, root := range []string{"testdata", filepath.Join("..", "testdata")} {
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var lines [][]byte
			sc := bufio.NewScanner(strings.NewReader(string(data)))
			sc.Buffer(nil, maxLine)
			for sc.Scan() {
				if l := strings.TrimSpace(sc.Text()); l != "" {
					if !gjson.Valid(l) || !gjson.Get(l, "type").Exists() {
						return nil // not a stream recording
					}
					lines = append(lines, []byte(l))
				}
			}
			if len(lines) > 0 {
				out[path] = lines
			}
			return nil
		})
	}
	if len(out) < 8 {
		t.Fatalf("found %d recorded streams, want the 8 known at least", len(out))
	}
	return out
}

// clock is the injected time of a machine test.
type clock struct{ now time.Time }

func (c *clock) step(d time.Duration) time.Time { c.now = c.now.Add(d); return c.now }

// feed gives the machine lines (each 10 ms after the last) and returns the
// union of its actions.
func feed(t *testing.T, s *stream, c *clock, lines [][]byte) action {
	t.Helper()
	var all action
	for _, l := range lines {
		now := c.step(10 * time.Millisecond)
		ev, emit, act := s.line(l, now)
		if emit && !ev.Time.Equal(now) {
			t.Fatalf("event time %v, want the injected %v", ev.Time, now)
		}
		all |= act | s.tick(now)
	}
	return all
}

// lastResult is the index of the last result line, -1 for none.
func lastResult(lines [][]byte) int {
	idx := -1
	for i, l := range lines {
		if gjson.GetBytes(l, "type").String() == "result" {
			idx = i
		}
	}
	return idx
}

func newMachine(c *clock) *stream {
	s := &stream{timing: defaultTiming(time.Minute)}
	s.begin(c.now)
	return s
}

// wantResultOutcome checks an outcome against the recording's result line.
func wantResultOutcome(t *testing.T, err error, result []byte) {
	t.Helper()
	isErr := gjson.GetBytes(result, "is_error").Bool()
	var api *APIError
	switch {
	case !isErr && err != nil:
		t.Fatalf("a success result ended as %v", err)
	case isErr && !errors.As(err, &api):
		t.Fatalf("an error result ended as %v (%T), want *APIError", err, err)
	case isErr && api.Status != int(gjson.GetBytes(result, "api_error_status").Int()):
		t.Fatalf("APIError status %d, recording says %s", api.Status, gjson.GetBytes(result, "api_error_status").Raw)
	}
}

// TestMachine_EveryRecording drives the stream machine from every recorded
// stream, with the clock injected, through each ending an attempt can have.
func TestMachine_EveryRecording(t *testing.T) {
	for path, lines := range recordedStreams(t) {
		res := lastResult(lines)
		t.Run(path, func(t *testing.T) {
			if res < 0 { // a recording cut short: only the endings without a result apply
				res = len(lines)
			}
			withResult := res < len(lines)
			t.Run("exits after its result", func(t *testing.T) {
				if !withResult {
					return
				}
				c := &clock{now: time.Unix(1e9, 0)}
				s := newMachine(c)
				act := feed(t, s, c, lines)
				if !s.sawInit || s.sessionID == "" || act&actEndInput == 0 || act&(actTerm|actKill) != 0 {
					t.Fatalf("init %v session %q actions %b", s.sawInit, s.sessionID, act)
				}
				s.exit(c.step(time.Second))
				if a := s.tick(c.step(time.Second)); a != actNone {
					t.Fatalf("actions after a clean exit: %b", a)
				}
				wantResultOutcome(t, s.outcome(false, 0, "", ""), lines[res])
			})
			t.Run("hangs after its result", func(t *testing.T) {
				if !withResult {
					return
				}
				c := &clock{now: time.Unix(1e9, 0)}
				s := newMachine(c)
				feed(t, s, c, lines)
				next := s.next()
				if next.IsZero() || next.Sub(c.now) > s.timing.result {
					t.Fatalf("no result grace armed (next %v, now %v)", next, c.now)
				}
				if a := s.tick(next.Add(-time.Millisecond)); a&actKill != 0 {
					t.Fatal("killed before the grace ended")
				}
				if a := s.tick(next); a&actKill == 0 {
					t.Fatalf("the grace ended without a kill: %b", a)
				}
				wantResultOutcome(t, s.outcome(false, -1, "killed", ""), lines[res])
			})
			t.Run("cut before its result", func(t *testing.T) {
				c := &clock{now: time.Unix(1e9, 0)}
				s := newMachine(c)
				feed(t, s, c, lines[:res])
				s.exit(c.step(time.Second))
				err := s.outcome(false, 1, "", "boom")
				var ex *ExitError
				if !errors.As(err, &ex) || ex.Code != 1 || ex.Stderr != "boom" {
					t.Fatalf("outcome %v (%T), want *ExitError code 1 with the stderr tail", err, err)
				}
				if k, retry := Classify(FailureOf(err)); k != KindRetry || !retry {
					t.Errorf("a death without a result classifies %s %v, want a retry", k, retry)
				}
			})
			t.Run("interrupted, the turn does not end", func(t *testing.T) {
				c := &clock{now: time.Unix(1e9, 0)}
				s := newMachine(c)
				feed(t, s, c, lines[:res])
				s.interrupted(c.step(time.Millisecond))
				if a := s.tick(c.step(s.timing.interrupt)); a&actTerm == 0 {
					t.Fatalf("no stop when the interrupt grace ended: %b", a)
				}
				if a := s.tick(c.step(s.timing.stop)); a&actKill == 0 {
					t.Fatalf("no kill when the stop grace ended: %b", a)
				}
				if err := s.outcome(true, -1, "killed", ""); !errors.Is(err, ErrInterrupted) {
					t.Fatalf("outcome %v, want ErrInterrupted", err)
				}
			})
			t.Run("cancelled", func(t *testing.T) {
				c := &clock{now: time.Unix(1e9, 0)}
				s := newMachine(c)
				feed(t, s, c, lines[:res/2])
				if a := s.cancel(context.Canceled, c.step(time.Millisecond)); a&actTerm == 0 {
					t.Fatalf("cancel did not stop claude: %b", a)
				}
				if a := s.tick(c.step(s.timing.stop)); a&actKill == 0 {
					t.Fatalf("no kill when the stop grace ended: %b", a)
				}
				if err := s.outcome(false, -1, "terminated", ""); !errors.Is(err, context.Canceled) {
					t.Fatalf("outcome %v, want context.Canceled", err)
				}
			})
		})
	}
}

// TestMachine_Start: silence past the start timeout, garbage before init
// and a death before init are start failures carrying the stderr tail;
// garbage after init is an event.
func TestMachine_Start(t *testing.T) {
	init := []byte(`{"type":"system","subtype":"init","session_id":"S"}`)
	t.Run("silent", func(t *testing.T) {
		c := &clock{now: time.Unix(1e9, 0)}
		s := &stream{timing: defaultTiming(time.Second)}
		s.begin(c.now)
		if a := s.tick(c.step(999 * time.Millisecond)); a != actNone {
			t.Fatalf("acted before the start timeout: %b", a)
		}
		if a := s.tick(c.step(time.Millisecond)); a&actTerm == 0 {
			t.Fatalf("no stop at the start timeout: %b", a)
		}
		var st *StartError
		if err := s.outcome(false, -1, "killed", "tail"); !errors.As(err, &st) || !strings.Contains(st.Reason, "no system/init") || st.Stderr != "tail" {
			t.Fatalf("outcome %v", err)
		}
	})
	t.Run("dies as the timeout fires", func(t *testing.T) {
		c := &clock{now: time.Unix(1e9, 0)}
		s := &stream{timing: defaultTiming(time.Second)}
		s.begin(c.now)
		s.tick(c.step(time.Second))
		if err := s.outcome(false, 3, "", "boom"); err.Error() != "harness: start: claude exited before system/init (exit 3): boom" {
			t.Fatalf("a death of its own at the timeout: %v", err)
		}
		if err := s.outcome(false, -1, "terminated", ""); !strings.Contains(err.Error(), "no system/init from claude within 1s") {
			t.Fatalf("control, stopped by us: %v", err)
		}
	})
	t.Run("init in time", func(t *testing.T) {
		c := &clock{now: time.Unix(1e9, 0)}
		s := &stream{timing: defaultTiming(time.Second)}
		s.begin(c.now)
		s.line(init, c.step(500*time.Millisecond))
		if a := s.tick(c.step(time.Hour)); a != actNone || !s.next().IsZero() {
			t.Fatalf("a started claude was acted on: %b, next %v", a, s.next())
		}
	})
	t.Run("garbage", func(t *testing.T) {
		c := &clock{now: time.Unix(1e9, 0)}
		s := &stream{timing: defaultTiming(time.Second)}
		s.begin(c.now)
		if _, emit, a := s.line([]byte("Welcome!"), c.now); emit || a&actTerm == 0 {
			t.Fatalf("garbage before init: emit %v act %b", emit, a)
		}
		var st *StartError
		if err := s.outcome(false, 1, "", ""); !errors.As(err, &st) || !strings.Contains(st.Reason, "not stream-json") {
			t.Fatalf("outcome %v", err)
		}
		s = &stream{timing: defaultTiming(time.Second)}
		s.line(init, c.now)
		if ev, emit, a := s.line([]byte("warning: odd"), c.now); !emit || ev.Kind != "garbage" || a != actNone {
			t.Fatalf("garbage after init: %v %v %b", ev.Kind, emit, a)
		}
	})
	t.Run("dies before init", func(t *testing.T) {
		s := &stream{timing: defaultTiming(time.Second)}
		var st *StartError
		if err := s.outcome(false, 3, "", "no config"); !errors.As(err, &st) || st.Error() != "harness: start: claude exited before system/init (exit 3): no config" {
			t.Fatalf("outcome %v", err)
		}
	})
}

// TestMachine_BackgroundTasks: a result while a background task runs is
// not final (the CLI prints another after the task's notification), so no
// grace is armed until the last one.
func TestMachine_BackgroundTasks(t *testing.T) {
	c := &clock{now: time.Unix(1e9, 0)}
	s := newMachine(c)
	feed(t, s, c, [][]byte{
		[]byte(`{"type":"system","subtype":"init","session_id":"S"}`),
		[]byte(`{"type":"system","subtype":"task_started","task_id":"T1","is_backgrounded":true}`),
		[]byte(`{"type":"result","subtype":"success","is_error":false,"result":"MAIN_WAITING","session_id":"S"}`),
	})
	if !s.next().IsZero() {
		t.Fatalf("a grace was armed while task T1 runs (next %v)", s.next())
	}
	feed(t, s, c, [][]byte{
		[]byte(`{"type":"system","subtype":"task_notification","task_id":"T1","status":"completed"}`),
		[]byte(`{"type":"result","subtype":"success","is_error":false,"result":"FINAL","session_id":"S"}`),
	})
	if s.next().IsZero() {
		t.Fatal("no grace after the final result")
	}
	if s.final.Get("result").String() != "FINAL" || s.outcome(false, -1, "killed", "") != nil {
		t.Fatalf("final %s", s.final.Raw)
	}
}

// TestMachine_HandoffInterrupt: crossing HandoffPolicy.At interrupts the
// turn; a result within the grace ends it as HandoffDue without a stop,
// silence past the grace stops claude.
func TestMachine_HandoffInterrupt(t *testing.T) {
	at := []byte(`{"type":"assistant","parent_tool_use_id":null,"message":{"model":"m","content":[],"usage":{"input_tokens":60000}}}`)
	for _, answered := range []bool{true, false} {
		c := &clock{now: time.Unix(1e9, 0)}
		warned := false
		s := &stream{handoff: HandoffPolicy{Enabled: true, Window: 100_000, Headroom: 50_000}, warned: &warned, timing: defaultTiming(time.Minute)}
		s.begin(c.now)
		act := feed(t, s, c, [][]byte{[]byte(`{"type":"system","subtype":"init","session_id":"S"}`), at})
		if act&actInterrupt == 0 {
			t.Fatalf("no interrupt at the handoff mark: %b", act)
		}
		if answered {
			feed(t, s, c, [][]byte{[]byte(`{"type":"result","subtype":"error_during_execution","is_error":true,"session_id":"S"}`)})
		}
		a := s.tick(c.step(s.timing.interrupt))
		if answered == (a&actTerm != 0) {
			t.Errorf("answered %v: actions at the grace's end %b", answered, a)
		}
		if err := s.outcome(false, 0, "", ""); !errors.Is(err, ErrHandoffDue) {
			t.Errorf("answered %v: outcome %v, want ErrHandoffDue", answered, err)
		}
	}
}

// TestDecide: the step's decision over each typed outcome.
func TestDecide(t *testing.T) {
	hp := HandoffPolicy{Enabled: true, MaxGenerations: 2}
	rs := Resilience{Enabled: true, MaxAttempts: 3}
	withSession := StepResult{SessionID: "S"}
	full := StepResult{SessionID: "S", Retired: []string{"a", "b"}}
	tests := []struct {
		name      string
		err       error
		text      string
		cancelled bool
		res       StepResult
		attempt   int
		rs        Resilience
		want      next
	}{
		{"success", nil, "", false, withSession, 1, rs, stepDone},
		{"cancelled", &APIError{Status: 529}, "", true, withSession, 1, rs, stepDone},
		{"interrupted", fmt.Errorf("x: %w", ErrInterrupted), "", false, withSession, 1, rs, stepResume},
		{"interrupted before a session", ErrInterrupted, "", false, StepResult{}, 1, rs, stepDone},
		{"handoff due", ErrHandoffDue, "", false, withSession, 1, rs, stepHandoff},
		{"overflow", &APIError{Status: 400, Text: "Prompt is too long"}, "", false, withSession, 1, rs, stepHandoff},
		{"full again", ErrHandoffDue, "", false, full, 1, rs, stepExhausted},
		{"transient", &APIError{Status: 529, Text: "Overloaded"}, "", false, withSession, 1, rs, stepRetry},
		{"transient, last attempt", &APIError{Status: 529, Text: "Overloaded"}, "", false, withSession, 3, rs, stepDone},
		{"transient, resilience off", &ExitError{Code: -1, Signal: "killed"}, "", false, withSession, 1, Resilience{}, stepDone},
		{"auth", &APIError{Status: 401, Text: "Invalid API key"}, "", false, withSession, 1, rs, stepDone},
		{"start", &StartError{Reason: "no system/init"}, "", false, StepResult{}, 1, rs, stepDone},
	}
	for _, tc := range tests {
		if got, _ := decide(tc.err, tc.text, tc.cancelled, tc.res, tc.attempt, hp, tc.rs); got != tc.want {
			t.Errorf("%s: decide = %d, want %d", tc.name, got, tc.want)
		}
	}
	if got, _ := decide(ErrHandoffDue, "", false, withSession, 1, HandoffPolicy{}, rs); got == stepHandoff {
		t.Error("control: no handoff with the policy off")
	}
}

// TestMachine_IdleLimit: silence past the idle limit after init stops the
// attempt with a StallError and a stall event, unless a tool call or a task
// is running (then the limit waits for its end and restarts from it).
func TestMachine_IdleLimit(t *testing.T) {
	const idle = 30 * time.Second
	initL := []byte(`{"type":"system","subtype":"init","session_id":"s1"}`)
	call := []byte(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"tu1","name":"Bash"}]}}`)
	answer := []byte(`{"type":"user","parent_tool_use_id":null,"message":{"content":[{"type":"tool_result","tool_use_id":"tu1"}]}}`)
	task := []byte(`{"type":"system","subtype":"task_started","task_id":"k1"}`)
	partial := []byte(`{"type":"stream_event","event":{"type":"content_block_delta"}}`)
	cases := []struct {
		name  string
		lines [][]byte
		stall bool
	}{
		{"silent after init", [][]byte{initL}, true},
		{"silent after a partial message", [][]byte{initL, partial}, true},
		{"a tool call runs", [][]byte{initL, call}, false},
		{"the tool answered", [][]byte{initL, call, answer}, true},
		{"a task runs", [][]byte{initL, task}, false},
		{"before init: the start timeout's", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &clock{now: time.Unix(1e9, 0)}
			s := &stream{timing: defaultTiming(time.Hour)}
			s.timing.idle = idle
			s.begin(c.now)
			feed(t, s, c, tc.lines)
			act := s.tick(c.step(idle - time.Second))
			if act != actNone {
				t.Fatalf("acted before the limit: %b", act)
			}
			act = s.tick(c.step(2 * time.Second))
			_, evOK := s.takeStall()
			var stall *StallError
			if got := errors.As(s.failure, &stall); got != tc.stall || evOK != tc.stall || tc.stall != (act&actTerm != 0) {
				t.Fatalf("stall %v (event %v, actions %b, failure %v), want %v", got, evOK, act, s.failure, tc.stall)
			}
			if kind, retry := Classify(FailureOf(s.failure)); tc.stall && (kind != KindRetry || !retry) {
				t.Errorf("a stall classifies as %s/%v, want a retry", kind, retry)
			}
		})
	}
}

// TestMachine_PingsAreNoProgress: an API that sends a ping each second
// and nothing else stalls at the idle limit counted from the last content;
// the control, a content delta each second, is progress and never stalls.
func TestMachine_PingsAreNoProgress(t *testing.T) {
	const idle = 5 * time.Second
	initL := []byte(`{"type":"system","subtype":"init","session_id":"s1"}`)
	for _, c := range []struct {
		name  string
		line  []byte
		stall bool
	}{
		{"pings", []byte(`{"type":"stream_event","event":{"type":"ping"}}`), true},
		{"keep_alive lines", []byte(`{"type":"keep_alive"}`), true},
		{"control: content deltas", []byte(`{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"a"}}}`), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			clk := &clock{now: time.Unix(1e9, 0)}
			s := &stream{timing: defaultTiming(time.Hour)}
			s.timing.idle = idle
			s.begin(clk.now)
			feed(t, s, clk, [][]byte{initL})
			for range 2 * int(idle/time.Second) {
				s.line(c.line, clk.step(time.Second))
				s.tick(clk.now)
			}
			var stall *StallError
			if got := errors.As(s.failure, &stall); got != c.stall {
				t.Fatalf("stall %v (failure %v), want %v", got, s.failure, c.stall)
			}
		})
	}
}

// A status line's status is in its event's data (not only in the raw
// line); a status line without one adds nothing (the control).
func TestMachine_StatusData(t *testing.T) {
	c := &clock{now: time.Unix(1e9, 0)}
	s := newMachine(c)
	s.line([]byte(`{"type":"system","subtype":"init","session_id":"S"}`), c.step(time.Millisecond))
	ev, emit, _ := s.line([]byte(`{"type":"system","subtype":"status","status":"compacting","session_id":"S"}`), c.step(time.Millisecond))
	if !emit || ev.Kind != "status" || ev.Data["status"] != "compacting" {
		t.Errorf("status event = %+v (emit %v)", ev, emit)
	}
	ev, _, _ = s.line([]byte(`{"type":"system","subtype":"status","session_id":"S"}`), c.step(time.Millisecond))
	if _, ok := ev.Data["status"]; ok {
		t.Errorf("control: a status line without one gained %v", ev.Data)
	}
}
