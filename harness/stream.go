package harness

import (
	"encoding/json"
	"time"

	"github.com/tidwall/gjson"
)

// stream is the pure state machine of one attempt's stdout: it turns lines
// into Events and remembers what the outcome needs. It never touches the
// process; handle's action tells the caller what to do.
type stream struct {
	handoff   HandoffPolicy
	warned    *bool // per generation, shared across attempts
	sessionID string
	sawInit   bool
	results   int
	final     gjson.Result // last result line
	context   int
	due       bool // context reached handoff.At
	words     string
	interrupt bool // an interrupt was sent
	mirror    [][]byte
}

// maxRawEvent caps the stream line an Event keeps as Raw.
const maxRawEvent = 256 << 10

type action int

const (
	actNone      action = iota
	actEndInput         // a result arrived: close stdin so the CLI can finish
	actInterrupt        // the context is full: interrupt the turn
)

// handle consumes one stdout line (which must start with '{').
func (s *stream) handle(line []byte) (ev Event, emit bool, act action) {
	typ := gjson.GetBytes(line, "type").String()
	sub := gjson.GetBytes(line, "subtype").String()
	ev = Event{Kind: typ, Time: time.Now(), Data: map[string]any{}}
	if len(line) <= maxRawEvent {
		ev.Raw = json.RawMessage(append([]byte(nil), line...))
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
			ev.Data["session_id"] = s.sessionID
			ev.Data["model"] = gjson.GetBytes(line, "model").String()
		case "api_retry":
			ev.Data["attempt"] = gjson.GetBytes(line, "attempt").Int()
			ev.Data["error_status"] = gjson.GetBytes(line, "error_status").Int()
		case "hook_started", "hook_response":
			emit = false
		}
	case "assistant":
		ev.Kind = "assistant"
		main := !gjson.GetBytes(line, "parent_tool_use_id").Exists() || gjson.GetBytes(line, "parent_tool_use_id").Type == gjson.Null
		main = main && gjson.GetBytes(line, "agent_id").String() == ""
		msg := gjson.GetBytes(line, "message")
		for _, b := range msg.Get("content").Array() {
			switch b.Get("type").String() {
			case "text":
				ev.Data["text"] = b.Get("text").String()
			case "tool_use":
				ev.Kind = "tool_use"
				ev.Data["tool"] = b.Get("name").String()
				ev.Data["tool_use_id"] = b.Get("id").String()
			}
		}
		if !main {
			ev.Data["agent_id"] = gjson.GetBytes(line, "agent_id").String()
			break
		}
		if msg.Get("model").String() == "<synthetic>" {
			break
		}
		if u := msg.Get("usage"); u.Exists() {
			s.context = int(u.Get("input_tokens").Int() + u.Get("cache_read_input_tokens").Int() + u.Get("cache_creation_input_tokens").Int())
			ev.Data["context"] = s.context
		}
		if s.handoff.Enabled && s.context > 0 {
			if s.context >= s.handoff.At() && !s.due {
				s.due = true
				return ev, emit, actInterrupt
			}
		}
	case "user":
		ev.Kind = "tool_result"
		if gjson.GetBytes(line, "parent_tool_use_id").String() != "" {
			ev.Data["agent_id"] = gjson.GetBytes(line, "agent_id").String()
		}
	case "result":
		s.results++
		s.final = gjson.ParseBytes(append([]byte(nil), line...))
		ev.Data["subtype"] = sub
		ev.Data["is_error"] = s.final.Get("is_error").Bool()
		ev.Data["num_turns"] = s.final.Get("num_turns").Int()
		ev.Data["cost_usd"] = s.final.Get("total_cost_usd").Float()
		return ev, emit, actEndInput
	case "transcript_mirror":
		s.mirror = append(s.mirror, append([]byte(nil), line...))
		emit = false
	case "control_response", "keep_alive", "stream_event":
		emit = false
	}
	return ev, emit, actNone
}

// nearCrossed reports (once per generation) that the context passed WarnAt.
func (s *stream) nearCrossed() bool {
	if !s.handoff.Enabled || s.warned == nil || *s.warned || s.context < s.handoff.WarnAt() {
		return false
	}
	*s.warned = true
	return true
}
