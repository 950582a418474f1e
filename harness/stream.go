package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/internal/textclip"
)

// stream is the pure state machine of one attempt, and it owns every
// decision about it: it consumes what the supervisor observes (stdout
// lines, a human interrupt, cancellation, the leader's exit, the end of
// stdout, the clock) and answers with actions; at the end, outcome names
// the attempt's result. It never touches the process and never reads the
// clock: every input carries now, and next says when to call tick.
type stream struct {
	handoff HandoffPolicy
	warned  *bool // per generation, shared across attempts
	timing  timing

	sessionID string
	sawInit   bool
	results   int
	final     gjson.Result // last result line
	finalBig  *cutLine     // the last result line's cut strings (nil: none)
	big       *cutLine     // the cut strings of the line being handled
	said      []string     // the main thread's texts since its last tool call (not StructuredOutput)
	saidCut   bool         // a tool call came after said: the next text starts it over
	context   int
	due       bool // context reached handoff.At
	mirror    [][]byte
	tasks     map[string]bool // tasks started and not yet notified
	tools     map[string]bool // tool calls made and not yet answered
	stall     *Event          // the stall event, until the supervisor takes it

	failure       error // what went wrong on flower's side (start, read, cancel)
	resultsAtInt  int   // results seen when the last interrupt was sent
	stoppedForInt bool  // the CLI did not end the turn within the grace
	forced        bool  // stdout closed by us after the leader died
	startTimedOut bool  // the failure is the start timeout
	exited        bool

	// Deadlines; zero is none.
	startBy, escalateAt, resultGraceAt, killAt, exitGraceAt, idleAt time.Time
}

// timing are the attempt's grace periods.
type timing struct {
	start     time.Duration // system/init must arrive within
	interrupt time.Duration // the CLI ends the turn after an interrupt within
	result    time.Duration // claude exits after its final result within
	stop      time.Duration // SIGTERM → SIGKILL
	exit      time.Duration // leader gone → stdout EOF (a grandchild holds it)
	idle      time.Duration // no stdout line for this while nothing runs: a stall (0: no limit)
}

// defaultTiming: interrupt gives the CLI time to end the turn (an interrupt
// that reaches it before its request is in flight is honoured only when the
// model's answer is complete); result is the grace after the final result.
func defaultTiming(start time.Duration) timing {
	return timing{start: start, interrupt: 5 * time.Second, result: 10 * time.Second, stop: 2 * time.Second, exit: 2 * time.Second}
}

// maxRawEvent caps the stream line an Event keeps as Raw.
const maxRawEvent = 256 << 10

// maxEventText caps the text an assistant Event carries: a huge model text
// is kept once, as the step's result (the manifest) and in claude's own
// transcript, not again in every event and events.jsonl.
const maxEventText = 64 << 10

// eventText is text for an Event's data: cut at maxEventText (on a rune
// boundary), with data["text_bytes"] saying how long it was.
func eventText(text string, data map[string]any) string {
	if len(text) <= maxEventText {
		return text
	}
	data["text_bytes"] = len(text)
	return text[:textclip.Boundary(text, maxEventText)] + textclip.Ellipsis
}

// action is what the supervisor does for the machine (bits, combined).
type action int

const (
	actNone      action = 0
	actEndInput  action = 1 << iota // a result arrived: close stdin so the CLI can finish
	actInterrupt                    // the context is full: send an interrupt control request
	actTerm                         // stop politely: close stdin, SIGTERM the group
	actKill                         // SIGKILL the group
	actCloseOut                     // close our end of stdout: a grandchild holds it
)

// begin starts the attempt's clock.
func (s *stream) begin(now time.Time) { s.startBy = now.Add(s.timing.start) }

// line consumes one raw stdout line: stream-json becomes an Event; anything
// else before system/init is a start failure, after it a "garbage" Event.
func (s *stream) line(b []byte, now time.Time) (ev Event, emit bool, act action) {
	if len(bytes.TrimSpace(b)) == 0 {
		return ev, false, actNone
	}
	if b[0] != '{' || !json.Valid(b) {
		if !s.sawInit {
			s.fail(&StartError{Reason: fmt.Sprintf("claude printed something that is not stream-json on stdout: %q", textclip.Runes(string(b), 200))})
			return ev, false, s.stop(now)
		}
		return Event{Kind: EventGarbage, Data: EventData(GarbageEvent{Line: textclip.Runes(string(b), 2000)}), Time: now}, true, actNone
	}
	ev, emit, act = s.handle(b, now)
	if s.sawInit {
		s.startBy = time.Time{}
	}
	if act&actInterrupt != 0 {
		s.interrupted(now)
	}
	if act&actEndInput != 0 && len(s.tasks) == 0 && !s.exited {
		s.resultGraceAt = now.Add(s.timing.result)
	}
	if !keepAlive(b) {
		s.armIdle(now)
	}
	return ev, emit, act
}

// keepAlive reports whether line only shows that the connection lives — a
// keep_alive line, or a streamed ping of the API (--include-partial-messages)
// — and carries no model content. It does not restart the idle limit: an
// API that drips pings without ever answering is a stall, as silence is.
func keepAlive(line []byte) bool {
	switch gjson.GetBytes(line, "type").String() {
	case "keep_alive":
		return true
	case "stream_event":
		return gjson.GetBytes(line, "event.type").String() == "ping"
	}
	return false
}

// armIdle restarts the idle limit after a stdout line that is progress
// (model content, not a keep-alive: see keepAlive), or suspends it while
// a tool call or a subagent (a task) runs: those may be silent for as long
// as they take. Before system/init the start timeout applies instead.
func (s *stream) armIdle(now time.Time) {
	s.idleAt = time.Time{}
	if s.timing.idle > 0 && s.sawInit && !s.exited && s.failure == nil && len(s.tools) == 0 && len(s.tasks) == 0 {
		s.idleAt = now.Add(s.timing.idle)
	}
}

// takeStall hands the stall event to the supervisor, once.
func (s *stream) takeStall() (Event, bool) {
	if s.stall == nil {
		return Event{}, false
	}
	ev := *s.stall
	s.stall = nil
	return ev, true
}

// interrupted notes that an interrupt was sent (by a human, or for a
// handoff): unless a result follows within the grace, the group is stopped.
func (s *stream) interrupted(now time.Time) {
	s.resultsAtInt = s.results
	s.escalateAt = now.Add(s.timing.interrupt)
}

// cancel ends the attempt because its context ended.
func (s *stream) cancel(err error, now time.Time) action {
	s.fail(fmt.Errorf("cancelled: %w", err))
	return s.stop(now)
}

// readError ends the attempt on an unreadable stdout (unless we closed it).
func (s *stream) readError(err error, now time.Time) action {
	if s.forced {
		return actNone
	}
	s.fail(fmt.Errorf("harness: read claude stdout: %w", err))
	return s.stop(now)
}

// exit notes that the leader is gone; a grandchild may still hold stdout.
func (s *stream) exit(now time.Time) {
	s.exited = true
	s.resultGraceAt, s.idleAt = time.Time{}, time.Time{}
	s.exitGraceAt = now.Add(s.timing.exit)
}

// tick acts on every deadline that has passed by now.
func (s *stream) tick(now time.Time) action {
	act := actNone
	passed := func(t *time.Time) bool {
		if t.IsZero() || now.Before(*t) {
			return false
		}
		*t = time.Time{}
		return true
	}
	if passed(&s.startBy) && !s.sawInit {
		s.startTimedOut = s.failure == nil
		s.fail(&StartError{Reason: fmt.Sprintf("no system/init from claude within %s", s.timing.start)})
		act |= s.stop(now)
	}
	if passed(&s.escalateAt) && s.results == s.resultsAtInt {
		s.stoppedForInt = true
		act |= s.stop(now)
	}
	if passed(&s.idleAt) && s.failure == nil {
		s.fail(&StallError{Idle: s.timing.idle})
		s.stall = &Event{Kind: EventStall, Time: now, Data: EventData(StallEvent{IdleS: s.timing.idle.Seconds(), SessionID: s.sessionID})}
		act |= s.stop(now)
	}
	if passed(&s.resultGraceAt) || passed(&s.killAt) {
		act |= actKill
	}
	if passed(&s.exitGraceAt) {
		s.forced = true
		act |= actKill | actCloseOut
	}
	return act
}

// next is the earliest pending deadline, zero for none.
func (s *stream) next() time.Time {
	var n time.Time
	for _, t := range []time.Time{s.startBy, s.escalateAt, s.resultGraceAt, s.killAt, s.exitGraceAt, s.idleAt} {
		if !t.IsZero() && (n.IsZero() || t.Before(n)) {
			n = t
		}
	}
	return n
}

// stop asks for a polite stop now and a SIGKILL after the stop grace.
func (s *stream) stop(now time.Time) action {
	if s.killAt.IsZero() {
		s.killAt = now.Add(s.timing.stop)
	}
	return actTerm
}

// fail records the first failure on flower's side.
func (s *stream) fail(err error) {
	if s.failure == nil {
		s.failure = err
	}
}

// outcome is the attempt's result once claude is gone: nil for a success,
// else one of the typed outcomes (outcome.go). humanInt says whether a
// human interrupt was sent; code/signal is how claude ended and stderr the
// tail of what it printed there.
func (s *stream) outcome(humanInt bool, code int, signal, stderr string) error {
	var start *StartError
	switch {
	case errors.As(s.failure, &start) && s.startTimedOut && code >= 0:
		// It exited by itself while the timeout fired: its death tells more.
		ex := ExitError{Code: code}
		return &StartError{Reason: fmt.Sprintf("claude exited before system/init (%s)", ex.how()), Stderr: stderr}
	case errors.As(s.failure, &start):
		if start.Stderr == "" {
			start.Stderr = stderr
		}
		return start
	case s.failure != nil:
		return s.failure
	case s.due:
		return ErrHandoffDue
	case humanInt && (s.stoppedForInt || s.results > s.resultsAtInt && s.final.Get("is_error").Bool()):
		return ErrInterrupted
	case s.results > 0:
		return resultFailure(s.final)
	case !s.sawInit:
		ex := ExitError{Code: code, Signal: signal}
		return &StartError{Reason: fmt.Sprintf("claude exited before system/init (%s)", ex.how()), Stderr: stderr}
	default:
		return &ExitError{Code: code, Signal: signal, Stderr: stderr}
	}
}

// handle consumes one stdout line (which must start with '{').
func (s *stream) handle(line []byte, now time.Time) (ev Event, emit bool, act action) {
	typ := gjson.GetBytes(line, "type").String()
	switch typ {
	case "control_response", "keep_alive", "stream_event":
		// Partial messages (one line per streamed delta) only show that
		// the API is answering: nothing to record.
		return ev, false, actNone
	}
	sub := gjson.GetBytes(line, "subtype").String()
	ev = Event{Kind: typ, Time: now, Data: map[string]any{}}
	if raw := rawCut(line, bigTexts(typ, unsafeString(line))); len(raw) <= maxRawEvent {
		ev.Raw = raw
	} else {
		ev.Data["raw_bytes"] = len(line) // a huge tool result: kept out of events.jsonl
	}
	emit = true
	switch typ {
	case "system":
		ev.Kind = sub
		switch sub {
		case "init":
			s.sawInit = true
			s.sessionID = gjson.GetBytes(line, "session_id").String()
			maps.Copy(ev.Data, EventData(InitEvent{SessionID: s.sessionID, Model: gjson.GetBytes(line, "model").String()}))
		case "api_retry":
			maps.Copy(ev.Data, EventData(APIRetryEvent{Attempt: int(gjson.GetBytes(line, "attempt").Int()),
				ErrorStatus: int(gjson.GetBytes(line, "error_status").Int())}))
		case "task_started":
			// A subagent's task holds the step (its result comes later);
			// a background shell (local_bash: a dev server, a watcher)
			// does not: once the result is in, the grace runs as for any
			// child, and the shell dies with the step's tree.
			if gjson.GetBytes(line, "task_type").String() == "local_bash" {
				break
			}
			if s.tasks == nil {
				s.tasks = map[string]bool{}
			}
			s.tasks[gjson.GetBytes(line, "task_id").String()] = true
		case "task_notification":
			delete(s.tasks, gjson.GetBytes(line, "task_id").String())
		case "status":
			// What claude is doing now (requesting, compacting, …): in the
			// event's data, not only in its raw line.
			if st := gjson.GetBytes(line, "status").String(); st != "" {
				ev.Data["status"] = st
			}
		case "hook_started", "hook_response":
			emit = false
		}
	case "assistant":
		if s.assistant(line, &ev) {
			return ev, emit, actInterrupt
		}
	case "user":
		ev.Kind = EventToolResult
		for _, b := range gjson.Get(unsafeString(line), "message.content").Array() {
			if b.Get("type").String() == "tool_result" {
				delete(s.tools, b.Get("tool_use_id").String())
			}
		}
		if gjson.GetBytes(line, "parent_tool_use_id").String() != "" {
			ev.Data["agent_id"] = gjson.GetBytes(line, "agent_id").String()
		}
	case "result":
		s.results++
		s.tools = nil // the turn is over: no call of it is still running
		// Parsed in place: the line is the machine's own (readLines hands
		// over a fresh slice and never touches it again), and the result
		// text is a piece of it, not a copy.
		s.final, s.finalBig = gjson.Parse(unsafeString(line)), s.big
		maps.Copy(ev.Data, EventData(ResultEvent{Subtype: sub, IsError: s.final.Get("is_error").Bool(),
			NumTurns: int(s.final.Get("num_turns").Int()), CostUSD: s.final.Get("total_cost_usd").Float()}))
		return ev, emit, actEndInput
	case "transcript_mirror":
		s.mirror = append(s.mirror, append([]byte(nil), line...))
		emit = false
	}
	return ev, emit, actNone
}

// bigTexts are the model texts of a stream line of kind typ that are over
// maxEventText: an assistant line's text blocks, a result line's result.
func bigTexts(typ, line string) []gjson.Result {
	var big []gjson.Result
	switch typ {
	case "assistant":
		for _, b := range gjson.Get(line, "message.content").Array() {
			if t := b.Get("text"); b.Get("type").String() == "text" && len(t.Raw) > maxEventText {
				big = append(big, t)
			}
		}
	case "result":
		if t := gjson.Get(line, "result"); len(t.Raw) > maxEventText {
			big = append(big, t)
		}
	}
	return big
}

// rawCut is a copy of line (an event's Raw) with each of big, results read
// in place from it in order, cut to maxEventText: the text is kept once,
// as the step's result, not again in events.jsonl.
func rawCut(line []byte, big []gjson.Result) json.RawMessage {
	if len(big) == 0 {
		return json.RawMessage(bytes.Clone(line))
	}
	var out []byte
	at := 0
	for _, t := range big {
		start := int(uintptr(unsafe.Pointer(unsafe.StringData(t.Raw))) - uintptr(unsafe.Pointer(unsafe.SliceData(line))))
		cut, _ := json.Marshal(t.Str[:textclip.Boundary(t.Str, maxEventText)] + textclip.Ellipsis)
		out = append(append(out, line[at:start]...), cut...)
		at = start + len(t.Raw)
	}
	return append(out, line[at:]...)
}

// offsetIn is where raw, a piece of line read in place, starts in line
// (-1: it is not a piece of line).
func offsetIn(line []byte, raw string) int {
	if len(raw) == 0 || len(line) == 0 {
		return -1
	}
	at := int(uintptr(unsafe.Pointer(unsafe.StringData(raw))) - uintptr(unsafe.Pointer(unsafe.SliceData(line))))
	if at < 0 || at+len(raw) > len(line) {
		return -1
	}
	return at
}

// unsafeString is b as a string without a copy. b must never change
// afterwards, and what is kept of a gjson result read from it must be
// cloned unless it is meant to hold all of b.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// assistant fills ev from an assistant line and follows the main thread's
// context; it reports whether a handoff is due now (send an interrupt).
func (s *stream) assistant(line []byte, ev *Event) bool {
	ev.Kind = EventAssistant
	// The message is read in place (a huge text is not copied); what
	// the event keeps is cloned, so that it does not hold the line.
	for _, b := range gjson.Get(unsafeString(line), "message.content").Array() {
		switch b.Get("type").String() {
		case "text":
			t := b.Get("text")
			ev.Data["text"] = strings.Clone(eventText(t.Str, ev.Data))
			if cut, ok := s.big.at(offsetIn(line, t.Raw)); ok {
				ev.Data["text_bytes"] = cut.bytes // its skeleton keeps the start
			}
			s.note(line, t.Str, "")
		case "tool_use":
			s.note(line, "", b.Get("name").String())
			ev.Kind = EventToolUse
			ev.Data["tool"] = strings.Clone(b.Get("name").String())
			ev.Data["tool_use_id"] = strings.Clone(b.Get("id").String())
			s.toolCalled(strings.Clone(b.Get("id").String()))
		}
	}
	tokens, main, ok := mainContext(line)
	if !main {
		ev.Data["agent_id"] = gjson.GetBytes(line, "agent_id").String()
		return false
	}
	if ok {
		s.context = tokens
		ev.Data["context"] = s.context
	}
	if s.handoff.Enabled && s.context > 0 {
		if s.context >= s.handoff.At() && !s.due {
			s.due = true
			return true
		}
	}
	return false
}

// structuredTool is the tool the CLI adds for --json-schema.
const structuredTool = "StructuredOutput"

// note follows the main thread's words for a structured step: its texts
// since its last tool call other than StructuredOutput (what the judge
// wrote for people before it handed in its typed value).
func (s *stream) note(line []byte, text, tool string) {
	if _, main, _ := mainContext(line); !main {
		return
	}
	switch {
	case tool != "" && tool != structuredTool:
		s.saidCut = true
	case text != "":
		if s.saidCut {
			s.said, s.saidCut = nil, false
		}
		s.said = append(s.said, strings.Clone(text))
	}
}

// structured is the final result's structured_output and the main
// thread's words that went with it; ok is false when there is none.
func (s *stream) structured() (value json.RawMessage, said string, ok bool) {
	v := s.final.Get("structured_output")
	if !v.Exists() || v.Type == gjson.Null {
		return nil, "", false
	}
	return json.RawMessage(strings.Clone(v.Raw)), strings.Join(s.said, "\n\n"), true
}

// toolCalled notes a tool call in flight (its result has not come yet).
func (s *stream) toolCalled(id string) {
	if s.tools == nil {
		s.tools = map[string]bool{}
	}
	s.tools[id] = true
}

// nearCrossed reports (once per generation) that the context passed WarnAt.
func (s *stream) nearCrossed() bool {
	if !s.handoff.Enabled || s.warned == nil || *s.warned || s.context < s.handoff.WarnAt() {
		return false
	}
	*s.warned = true
	return true
}
