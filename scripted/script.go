// Package scripted is a scripted stand-in for the Anthropic Messages API, for
// driving the real Claude Code CLI offline.
//
// Lifecycle: Parse or Load a Script, Start a Server on a loopback address, point
// claude at Server.URL() through ANTHROPIC_BASE_URL, read Server.Requests() to
// see exactly what the model was sent, Close. Each request is routed to the
// first Conversation whose Match fits (system prompt, first user message,
// model) and that still has replies in the request's claude session (each
// session starts every conversation over; claude's tool-less helper requests
// get a built-in answer instead); the conversation's next Reply is given,
// as an SSE stream or a plain JSON message, or as a fault (HTTP error, a
// connection dropped mid-stream, a delay). A request nothing matches gets a
// 400 whose message names what arrived, so a test failure says what to script.
//
// The server powers the end-to-end tests and `flower demo`; it is started from
// a shell with `flower model serve --script FILE --addr 127.0.0.1:0`.
//
// Cassettes record and replay real conversations instead: Record starts a
// recording proxy to a real Messages API that appends one exchange per call
// to a file (credentials never written); ServeCassette replays such a file,
// matching each request by RequestKey (the normalized model, system, tools
// and messages; see normalize.go), and is Closed like any Server.
package scripted

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"sigs.k8s.io/yaml"
)

// Script says, per conversation, which replies to give in order.
type Script struct {
	Conversations []Conversation `json:"conversations"`
}

// Conversation is one scripted dialogue: the requests routed to it receive
// Replies in order. When Replies are used up the next matching conversation
// takes over; Func, when set, answers every request after that.
type Conversation struct {
	Name    string  `json:"name"`
	Match   Match   `json:"match"`
	Replies []Reply `json:"replies"`
	// AcrossSessions counts the replies once per server instead of per
	// claude session: a judge that rejects the first round (one session)
	// and accepts the second (another).
	AcrossSessions bool `json:"across_sessions,omitempty"`
	// Func answers requests once Replies are used up (Go callers only).
	Func func(Request) Reply `json:"-"`
}

// Match selects requests by role and by substring; every non-empty field
// must match. An empty Match matches any request. Role is a flower role
// (clarify, goal, coordinator, coder, judge, oracle; see role.go), so a
// script need not know the Chinese texts that tell them apart, or any
// subagent type: the requests of a subagent a scripted Agent call started
// with that subagent_type.
type Match struct {
	Role      string `json:"role,omitempty"`
	System    string `json:"system,omitempty"`
	FirstUser string `json:"first_user,omitempty"`
	Model     string `json:"model,omitempty"`
}

// Reply is one model turn, or a fault in its place.
type Reply struct {
	Text       string  `json:"text,omitempty"`
	ToolUse    *Block  `json:"tool_use,omitempty"`
	Blocks     []Block `json:"blocks,omitempty"`
	Usage      *Usage  `json:"usage,omitempty"`
	StopReason string  `json:"stop_reason,omitempty"`
	Fault      *Fault  `json:"fault,omitempty"`
	DelayMS    int     `json:"delay_ms,omitempty"`
	// Structured is a typed answer (a judge's verdict, a goal): the reply
	// ends with a tool_use of StructuredOutput (the tool claude adds for
	// --json-schema) whose input is this object, after the reply's text.
	Structured json.RawMessage `json:"structured,omitempty"`
	// HandBack keeps this reply for the request that hands a subagent's
	// work back (the Agent tool's result, or the <task-notification> of a
	// background Agent). Until then, the request that only says a
	// background Agent was launched gets a short built-in reply that uses
	// up no reply of the script (claude starts Agent in the background by
	// default, which costs the coordinator one extra turn).
	HandBack bool `json:"hand_back,omitempty"`
}

// Block is a content block of a reply: "text" or "tool_use".
type Block struct {
	Type  string          `json:"type,omitempty"`
	Text  string          `json:"text,omitempty"`
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
}

// Usage is the token accounting reported with a reply.
type Usage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
}

// Fault replaces a reply with a failure, or cuts it short.
//
//   - Status is an HTTP error answer (400 with a "prompt is too long"
//     message, 401, 403, 404, 413, 429, 500, 502, 503, 504, 529), with
//     RetryAfter as its retry-after header when set.
//   - Drop cuts the connection. DropAt says where: "headers" resets it before
//     any response byte, "message_start" ends the body cleanly right after
//     message_start (claude then retries without streaming), "text"
//     halfway through the reply's text, "tool_use" halfway through its
//     tool_use input, "" once the first content block has started. A drop
//     may carry the reply's content (the part sent before the cut).
//   - Stall sends message_start and then nothing until the client hangs up.
//   - Drip sends message_start and then a keep-alive ping each second,
//     never any content, until the client hangs up: an API that drips
//     bytes without progress.
type Fault struct {
	Status     int    `json:"status,omitempty"`
	Type       string `json:"type,omitempty"`
	Message    string `json:"message,omitempty"`
	RetryAfter string `json:"retry_after,omitempty"`
	Drop       bool   `json:"drop,omitempty"`
	DropAt     string `json:"drop_at,omitempty"`
	Stall      bool   `json:"stall,omitempty"`
	Drip       bool   `json:"drip,omitempty"`
}

// dropPoints are the places a Drop may cut.
var dropPoints = map[string]bool{"": true, "headers": true, "message_start": true, "text": true, "tool_use": true}

// Load reads a script file (JSON or YAML).
func Load(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scripted: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Parse decodes a script from JSON or YAML and validates it. Unknown fields
// are errors, so a typo never silently becomes an empty reply.
func Parse(data []byte) (*Script, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, errors.New("scripted: empty script")
	}
	if trimmed[0] != '{' {
		j, err := yaml.YAMLToJSON(trimmed)
		if err != nil {
			return nil, fmt.Errorf("scripted: bad YAML: %w", err)
		}
		trimmed = j
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("scripted: bad script: %w", err)
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// faultStatuses are the HTTP statuses a Fault may carry.
var faultStatuses = map[int]string{
	400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
	404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
	500: "api_error", 502: "api_error", 503: "api_error", 504: "timeout_error", 529: "overloaded_error",
}

// validate checks a script and names the first problem by its position.
// It also fills defaults: conversation names and block types.
func (s *Script) validate() error {
	if len(s.Conversations) == 0 {
		return errors.New("scripted: script has no conversations")
	}
	seen := map[string]bool{}
	for i := range s.Conversations {
		c := &s.Conversations[i]
		if c.Name == "" {
			c.Name = fmt.Sprintf("conversation-%d", i)
		}
		if seen[c.Name] {
			return fmt.Errorf("scripted: conversations[%d]: duplicate name %q", i, c.Name)
		}
		seen[c.Name] = true
		if err := validRole(c.Match.Role); err != nil {
			return fmt.Errorf("scripted: conversation %q: %w", c.Name, err)
		}
		if len(c.Replies) == 0 && c.Func == nil {
			return fmt.Errorf("scripted: conversation %q has no replies", c.Name)
		}
		for j := range c.Replies {
			if err := c.Replies[j].validate(); err != nil {
				return fmt.Errorf("scripted: conversation %q reply %d: %w", c.Name, j, err)
			}
		}
	}
	return nil
}

func (r *Reply) validate() error {
	if r.DelayMS < 0 {
		return errors.New("delay_ms is negative")
	}
	if r.HandBack && r.Fault != nil {
		return errors.New("a hand_back reply carries content, not a fault")
	}
	if f := r.Fault; f != nil {
		switch {
		case f.Drop && f.Stall, f.Drip && (f.Drop || f.Stall):
			return errors.New("a fault either drops, stalls or drips, one of them")
		case f.Drop && !dropPoints[f.DropAt]:
			return fmt.Errorf("drop_at %q is not headers, message_start, text or tool_use", f.DropAt)
		case !f.Drop && f.DropAt != "":
			return errors.New("drop_at needs drop: true")
		case (f.Drop || f.Stall || f.Drip) && f.Status != 0:
			return errors.New("a drop, stall or drip has no status")
		case f.Drop || f.Stall || f.Drip:
			return nil // content, if any, is what is sent before the cut
		case r.Text != "" || r.ToolUse != nil || len(r.Blocks) > 0 || r.Structured != nil:
			return errors.New("a fault cannot also carry content")
		}
		if _, ok := faultStatuses[f.Status]; !ok {
			return fmt.Errorf("fault status %d is not one of 400, 401, 403, 404, 413, 429, 500, 502, 503, 504, 529 (or use drop or stall)", f.Status)
		}
		return nil
	}
	if len(r.Blocks) > 0 && (r.Text != "" || r.ToolUse != nil) {
		return errors.New("use either blocks or text/tool_use, not both")
	}
	blocks := r.content()
	if len(blocks) == 0 {
		return errors.New("reply has no text, tool_use, blocks or fault")
	}
	for k, b := range blocks {
		switch b.Type {
		case "text":
		case "tool_use":
			if b.Name == "" {
				return fmt.Errorf("block %d: tool_use needs a name", k)
			}
			if len(b.Input) > 0 {
				var obj map[string]any
				if err := json.Unmarshal(b.Input, &obj); err != nil || obj == nil {
					return fmt.Errorf("block %d: tool_use input must be a JSON object", k)
				}
			}
		default:
			return fmt.Errorf("block %d: type %q is not text or tool_use", k, b.Type)
		}
	}
	return nil
}

// content lists the reply's blocks, with text and tool_use folded in and
// block types inferred.
func (r *Reply) content() []Block {
	var out []Block
	if r.Text != "" {
		out = append(out, Block{Type: "text", Text: r.Text})
	}
	if r.ToolUse != nil {
		b := *r.ToolUse
		b.Type = "tool_use"
		out = append(out, b)
	}
	for _, b := range r.Blocks {
		if b.Type == "" {
			if b.Name != "" {
				b.Type = "tool_use"
			} else {
				b.Type = "text"
			}
		}
		out = append(out, b)
	}
	if r.Structured != nil {
		out = append(out, Block{Type: "tool_use", Name: StructuredTool, Input: r.Structured})
	}
	return out
}

// matches reports whether the request fits m.
func (m Match) matches(r Request) bool {
	return (m.Role == "" || r.Role() == m.Role || r.Agent == m.Role) &&
		(m.System == "" || strings.Contains(r.System(), m.System)) &&
		(m.FirstUser == "" || strings.Contains(r.FirstUser(), m.FirstUser)) &&
		(m.Model == "" || strings.Contains(r.Model(), m.Model))
}
