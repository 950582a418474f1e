package harness

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/tidwall/gjson"
)

// Event kinds. An Event's Kind is one of these (a system line of another
// subtype keeps its subtype as kind); its Data is the payload that the
// matching typed accessor below decodes. The JSON of events.jsonl and of
// --json lines is Event itself, so these names and the payloads' json tags
// are the wire format: add fields, never rename them.
const (
	// Emitted by the Runtime around a step.
	EventStepStart = "step_start" // StepStartEvent
	EventStepEnd   = "step_end"   // StepEndEvent
	EventRetry     = "retry"      // RetryEvent: a failed attempt will be retried
	EventOffline   = "offline"    // OfflineEvent: the API is unreachable (each probe; gave_up at the end)
	EventOnline    = "online"     // OnlineEvent: the API answers again
	EventInterrupt = "interrupt"  // InterruptEvent: a human's words resume the step
	EventHandoff   = "handoff"    // HandoffEvent: near / writing / done
	EventStore     = "store"      // ErrorEvent: the session store failed (op)
	EventError     = "error"      // ErrorEvent
	EventStall     = "stall"      // StallEvent: no stream byte for the idle limit; the attempt ends (transient)

	// Turned from claude's stream-json lines by the stream machine.
	EventInit             = "init"              // InitEvent
	EventAPIRetry         = "api_retry"         // APIRetryEvent: claude retries the API by itself
	EventTaskStarted      = "task_started"      // a background task began
	EventTaskNotification = "task_notification" // a background task ended
	EventAssistant        = "assistant"         // MessageEvent: text
	EventToolUse          = "tool_use"          // MessageEvent: a tool call
	EventToolResult       = "tool_result"       // a tool's answer
	EventResult           = "result"            // ResultEvent: the attempt's end
	EventGarbage          = "garbage"           // GarbageEvent: a stdout line that is not stream-json

	// Reported by flower-hook over the step's socket.
	EventGuard  = "guard"  // GuardEvent
	EventReport = "report" // a socket line without a kind

	// Emitted by the flow package (a workflow around the Runtime).
	EventStep = "step" // FlowStepEvent: a workflow step begins
	EventTask = "task" // TaskEvent: a step's note (unverifiable goal checks)
	EventGoal = "goal" // GoalEvent: the goal was frozen, or its file changed on disk
	// EventVerdict is a judge round's typed verdict: flow.TypedVerdict
	// ({verdict, checks, failed, reason}).
	EventVerdict = "verdict"

	// Emitted by the human channel (flow.HumanChannel.OnRecord).
	EventMessage  = "message"  // ChannelEvent: a message told (flower tell), or read by an inbox call
	EventQuestion = "question" // ChannelEvent: a question put to the person (ask), with its answer
)

// Channel event states.
const (
	MessageTold = "told" // EventMessage: queued for the coordinator's next inbox call
	MessageRead = "read" // EventMessage: an inbox call handed it to the model
)

// ChannelEvent is one exchange with the person (EventMessage,
// EventQuestion). A message: State told or read, Text the message. A
// question: Text the question, Options its choices, State the answer's
// state (answered, timeout, refused) and Answer its text.
type ChannelEvent struct {
	State   string   `json:"state"`
	Text    string   `json:"text"`
	Options []string `json:"options,omitempty"`
	Answer  string   `json:"answer,omitempty"`
}

// Goal event states.
const (
	GoalFrozen  = "frozen"  // the goal step (or the guard's first round) froze the goal
	GoalChanged = "changed" // the goal file no longer holds the frozen goal; the judge keeps the frozen one
)

// GoalEvent is the frozen goal (EventGoal): its State, the file at Path,
// the sha256 of the frozen text, and with State "frozen" the Text itself
// (the run's record of what every judge round is given); with "changed",
// DiskSHA256 is what the file holds now ("" when it is gone).
type GoalEvent struct {
	State      string `json:"state"`
	Path       string `json:"path"`
	SHA256     string `json:"sha256"`
	Text       string `json:"text,omitempty"`
	DiskSHA256 string `json:"disk_sha256,omitempty"`
}

// StallEvent is an attempt ended for silence (EventStall): IdleS is the
// idle limit in seconds, SessionID the session the next attempt resumes.
type StallEvent struct {
	IdleS     float64 `json:"idle_s"`
	SessionID string  `json:"session_id"`
}

// FlowStepEvent is a workflow step beginning (EventStep): Index counts
// from 0.
type FlowStepEvent struct {
	Index   int  `json:"index"`
	Total   int  `json:"total"`
	Resumed bool `json:"resumed"`
	Woke    int  `json:"woke"`
}

// TaskEvent is a step's note about its task (EventTask): the goal checks
// that cannot be verified in this environment, of Total, in the goal at Path.
type TaskEvent struct {
	Unverifiable []string `json:"unverifiable"`
	Total        int      `json:"total"`
	Path         string   `json:"path"`
}

// StepStartEvent opens one Runtime.Run (EventStepStart).
type StepStartEvent struct {
	Resume string `json:"resume"`
	Fork   bool   `json:"fork"`
}

// StepEndEvent closes one Runtime.Run (EventStepEnd).
type StepEndEvent struct {
	OK        bool   `json:"ok"`
	Error     string `json:"error"`
	SessionID string `json:"session_id"`
	Attempts  int    `json:"attempts"`
}

// InitEvent is claude's system/init (EventInit).
type InitEvent struct {
	SessionID string `json:"session_id"`
	Model     string `json:"model"`
}

// MessageEvent is one assistant line (EventAssistant or EventToolUse).
// Main says it is the main thread's (not a subagent's); Context is the
// main thread's context level it reports (0 when it reports none; see
// mainContext); Synthetic marks claude's own "<synthetic>" messages.
type MessageEvent struct {
	Text      string `json:"text"`
	Tool      string `json:"tool"`
	ToolUseID string `json:"tool_use_id"`
	AgentID   string `json:"agent_id"`
	Context   int    `json:"context"`
	MessageID string `json:"-"`
	Main      bool   `json:"-"`
	Synthetic bool   `json:"-"`
}

// APIRetryEvent is claude retrying the API by itself (EventAPIRetry).
type APIRetryEvent struct {
	Attempt     int `json:"attempt"`
	ErrorStatus int `json:"error_status"`
}

// GarbageEvent is a stdout line that is not stream-json, after system/init
// (EventGarbage): its first 2000 characters.
type GarbageEvent struct {
	Line string `json:"line"`
}

// ResultEvent is claude's result line (EventResult): the attempt's turns
// and its cost.
type ResultEvent struct {
	Subtype  string  `json:"subtype"`
	IsError  bool    `json:"is_error"`
	NumTurns int     `json:"num_turns"`
	CostUSD  float64 `json:"cost_usd"`
}

// RetryEvent announces a retry (EventRetry) of the failed attempt Attempt.
type RetryEvent struct {
	Attempt int     `json:"attempt"`
	Kind    string  `json:"kind"`
	Error   string  `json:"error"`
	DelayS  float64 `json:"delay_s"`
}

// Handoff phases.
const (
	HandoffNear    = "near"    // the context passed WarnAt
	HandoffWriting = "writing" // the full session writes its handoff
	HandoffDone    = "done"    // a fresh session takes over
)

// HandoffEvent is one phase of a context handoff (EventHandoff). CostUSD is
// the writing round's cost (phase done): that round's own stream is not
// recorded.
type HandoffEvent struct {
	Phase     string   `json:"phase"`
	Context   int      `json:"context"`
	WarnAt    int      `json:"warn_at"`
	At        int      `json:"at"`
	SessionID string   `json:"session_id"`
	Degraded  bool     `json:"degraded"`
	Path      string   `json:"path"`
	Sections  []string `json:"sections"`
	Retired   string   `json:"retired"`
	CostUSD   float64  `json:"cost_usd"`
}

// The payloads the Runtime emits for each handoff phase (HandoffEvent
// reads all three): near carries the context against the thresholds,
// writing the session that writes, done the handoff's outcome.
type (
	handoffNear struct {
		Phase   string `json:"phase"`
		Context int    `json:"context"`
		WarnAt  int    `json:"warn_at"`
		At      int    `json:"at"`
	}
	handoffWriting struct {
		Phase     string `json:"phase"`
		SessionID string `json:"session_id"`
		Context   int    `json:"context"`
	}
	handoffDone struct {
		Phase    string   `json:"phase"`
		Degraded bool     `json:"degraded"`
		Path     string   `json:"path"`
		Sections []string `json:"sections"`
		Retired  string   `json:"retired"`
		CostUSD  float64  `json:"cost_usd"`
	}
)

// GuardEvent is flower-hook's report of a guard's decision (EventGuard).
type GuardEvent struct {
	Guard     string         `json:"guard"`
	Decision  string         `json:"decision"`
	Tool      string         `json:"tool"`
	ToolUseID string         `json:"tool_use_id"`
	SessionID string         `json:"session_id"`
	AgentID   string         `json:"agent_id"`
	Detail    map[string]any `json:"detail"`
}

// Denied says the guard refused the tool call.
func (g GuardEvent) Denied() bool { return g.Decision == "deny" }

// Spilled says the spill guard moved a large output into the workbench.
func (g GuardEvent) Spilled() bool { return g.Guard == "spill" && g.Decision == "rewrite" }

// InterruptEvent is a human interrupt that resumes the step (EventInterrupt).
type InterruptEvent struct {
	Words     string `json:"words"`
	SessionID string `json:"session_id"`
}

// OfflineEvent is one failed probe of the API between attempts
// (EventOffline); GaveUp marks the last one, when the wait ends unanswered.
type OfflineEvent struct {
	Host      string  `json:"host"`
	Error     string  `json:"error"`
	NextProbe string  `json:"next_probe"` // RFC 3339
	WaitedS   float64 `json:"waited_s"`
	GaveUp    bool    `json:"gave_up"`
}

// The payloads the Runtime emits while the API is unreachable (OfflineEvent
// reads both): one per failed probe, and the last one when the wait gives
// up.
type (
	offlineProbe struct {
		Host      string  `json:"host"`
		Error     string  `json:"error"`
		NextProbe string  `json:"next_probe"`
		WaitedS   float64 `json:"waited_s"`
	}
	offlineGaveUp struct {
		Host   string `json:"host"`
		Error  string `json:"error"`
		GaveUp bool   `json:"gave_up"`
	}
)

// OnlineEvent says the API answers again after WaitedS (EventOnline).
type OnlineEvent struct {
	Host    string  `json:"host"`
	WaitedS float64 `json:"waited_s"`
}

// ErrorEvent is the payload of EventError and EventStore (Op names what
// failed). A store event of a resume names the SessionID it could not load,
// and Fresh says the step starts that session fresh instead.
type ErrorEvent struct {
	Error     string `json:"error"`
	Op        string `json:"op,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	Fresh     bool   `json:"fresh,omitempty"`
}

// EventData is payload, one of the payload structs above, as an Event's
// Data: one entry per field under its json name, holding the field's Go
// value (an int stays an int, so that a live event reads as it was built;
// a read-back one holds float64s, which the accessors below decode alike).
// A field tagged "-" is left out, and one tagged omitempty when it is empty
// (as encoding/json leaves it out). The JSON of the map is the JSON of the
// struct, so a payload struct fixes the wire format of its event.
func EventData(payload any) map[string]any {
	v := reflect.ValueOf(payload)
	t := v.Type()
	data := make(map[string]any, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" && opts == "" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fv := v.Field(i)
		if opts == "omitempty" && emptyValue(fv) {
			continue
		}
		data[name] = fv.Interface()
	}
	return data
}

// emptyValue is encoding/json's "empty" for omitempty.
func emptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// decodeData decodes e.Data into v when e is of kind; the round trip through
// JSON makes a live event (Go ints) and a read-back one (float64s) alike.
func decodeData[T any](e Event, kinds ...string) (T, bool) {
	var v T
	match := false
	for _, k := range kinds {
		match = match || e.Kind == k
	}
	if !match {
		return v, false
	}
	if len(e.Data) > 0 {
		b, err := json.Marshal(e.Data)
		if err == nil {
			_ = json.Unmarshal(b, &v) // a field of the wrong type stays zero
		}
	}
	return v, true
}

// FlowStep is the payload of a EventStep event.
func (e Event) FlowStep() (FlowStepEvent, bool) { return decodeData[FlowStepEvent](e, EventStep) }

// Task is the payload of an EventTask event.
func (e Event) Task() (TaskEvent, bool) { return decodeData[TaskEvent](e, EventTask) }

// Goal is the payload of an EventGoal event.
func (e Event) Goal() (GoalEvent, bool) { return decodeData[GoalEvent](e, EventGoal) }

// Channel is the payload of an EventMessage or EventQuestion event.
func (e Event) Channel() (ChannelEvent, bool) {
	return decodeData[ChannelEvent](e, EventMessage, EventQuestion)
}

// StepStart is the payload of a EventStepStart event.
func (e Event) StepStart() (StepStartEvent, bool) {
	return decodeData[StepStartEvent](e, EventStepStart)
}

// StepEnd is the payload of a EventStepEnd event.
func (e Event) StepEnd() (StepEndEvent, bool) { return decodeData[StepEndEvent](e, EventStepEnd) }

// Init is the payload of a EventInit event.
func (e Event) Init() (InitEvent, bool) { return decodeData[InitEvent](e, EventInit) }

// Result is the payload of a EventResult event.
func (e Event) Result() (ResultEvent, bool) { return decodeData[ResultEvent](e, EventResult) }

// Retry is the payload of a EventRetry event.
func (e Event) Retry() (RetryEvent, bool) { return decodeData[RetryEvent](e, EventRetry) }

// Stall is the payload of a EventStall event.
func (e Event) Stall() (StallEvent, bool) { return decodeData[StallEvent](e, EventStall) }

// Handoff is the payload of a EventHandoff event.
func (e Event) Handoff() (HandoffEvent, bool) { return decodeData[HandoffEvent](e, EventHandoff) }

// APIRetry is the payload of an EventAPIRetry event.
func (e Event) APIRetry() (APIRetryEvent, bool) { return decodeData[APIRetryEvent](e, EventAPIRetry) }

// Garbage is the payload of an EventGarbage event.
func (e Event) Garbage() (GarbageEvent, bool) { return decodeData[GarbageEvent](e, EventGarbage) }

// Guard is the payload of a EventGuard event.
func (e Event) Guard() (GuardEvent, bool) { return decodeData[GuardEvent](e, EventGuard) }

// Interrupt is the payload of a EventInterrupt event.
func (e Event) Interrupt() (InterruptEvent, bool) {
	return decodeData[InterruptEvent](e, EventInterrupt)
}

// Failure is the payload of a EventError or EventStore event.
func (e Event) Failure() (ErrorEvent, bool) {
	return decodeData[ErrorEvent](e, EventError, EventStore)
}

// Offline is the payload of an EventOffline event.
func (e Event) Offline() (OfflineEvent, bool) { return decodeData[OfflineEvent](e, EventOffline) }

// Online is the payload of an EventOnline event.
func (e Event) Online() (OnlineEvent, bool) { return decodeData[OnlineEvent](e, EventOnline) }

// Message is the payload of a EventAssistant or EventToolUse event. Main is
// decided by the stream machine, which records agent_id only for a
// subagent's line; message id and model come from the raw line.
func (e Event) Message() (MessageEvent, bool) {
	m, ok := decodeData[MessageEvent](e, EventAssistant, EventToolUse)
	if !ok {
		return m, false
	}
	_, sub := e.Data["agent_id"]
	m.Main = !sub
	m.MessageID = gjson.GetBytes(e.Raw, "message.id").String()
	m.Synthetic = gjson.GetBytes(e.Raw, "message.model").String() == syntheticModel
	return m, true
}

// syntheticModel is the model of the messages claude makes up itself (an
// API error, an interruption): no model turn, no usage.
const syntheticModel = "<synthetic>"

// mainContext is the one rule for the main thread's context gauge: an
// assistant line of the main thread (no parent_tool_use_id, no agent_id),
// not synthetic, with usage, is at input + cache read + cache creation
// tokens. ok is false for any other line.
func mainContext(line []byte) (tokens int, main, ok bool) {
	l := gjson.Parse(unsafeString(line)) // nothing of it is kept: no copy
	parent := l.Get("parent_tool_use_id")
	main = (!parent.Exists() || parent.Type == gjson.Null) && l.Get("agent_id").String() == ""
	msg := l.Get("message")
	u := msg.Get("usage")
	if !main || msg.Get("model").String() == syntheticModel || !u.Exists() {
		return 0, main, false
	}
	return int(u.Get("input_tokens").Int() + u.Get("cache_read_input_tokens").Int() + u.Get("cache_creation_input_tokens").Int()), true, true
}
