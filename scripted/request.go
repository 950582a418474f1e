package scripted

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// Request is one recorded HTTP request and how it was answered.
type Request struct {
	Seq          int             `json:"seq"`
	Time         time.Time       `json:"time"`
	Method       string          `json:"method"`
	Path         string          `json:"path"`
	Session      string          `json:"session,omitempty"`      // the claude session it came from ("" when it named none)
	Conversation string          `json:"conversation,omitempty"` // "" when nothing matched; "(auxiliary)" for claude's helper requests
	Reply        int             `json:"reply"`                  // index into the conversation's replies; -1 for Func or unmatched
	Status       int             `json:"status"`
	Error        string          `json:"error,omitempty"` // the message of a 400 for an unmatched request
	Agent        string          `json:"agent,omitempty"` // the subagent type of the scripted Agent call that started it ("" for none)
	Body         json.RawMessage `json:"body,omitempty"`
}

// ToolResult is one tool_result block the model was sent.
type ToolResult struct {
	ToolUseID string
	Content   string
	IsError   bool
}

func (r Request) get(path string) gjson.Result { return gjson.GetBytes(r.Body, path) }

// Model is the requested model name.
func (r Request) Model() string { return r.get("model").String() }

// fromClaude reports whether the request came from Claude Code: its system
// prompt opens with the x-anthropic-billing-header block claude puts first.
func (r Request) fromClaude() bool {
	for _, b := range r.get("system").Array() {
		return strings.HasPrefix(b.Get("text").String(), "x-anthropic-billing-header:")
	}
	return strings.HasPrefix(r.get("system").String(), "x-anthropic-billing-header:")
}

// auxiliary reports whether the request is one of claude's helper calls
// (session title, summaries, suggestions): it comes from claude but offers
// the model no tools, which no main-thread or subagent turn does.
func (r Request) auxiliary() bool {
	return r.fromClaude() && len(r.get("tools").Array()) == 0
}

// Stream reports whether a streamed answer was asked for.
func (r Request) Stream() bool { return r.get("stream").Bool() }

// System is the whole system prompt, blocks joined by newlines.
func (r Request) System() string { return textOf(r.get("system")) }

// Messages is the request's messages array.
func (r Request) Messages() gjson.Result { return r.get("messages") }

// FirstUser is the text of the first user message.
func (r Request) FirstUser() string {
	for _, m := range r.Messages().Array() {
		if m.Get("role").String() == "user" {
			return textOf(m.Get("content"))
		}
	}
	return ""
}

// Tools lists the names of the tools offered to the model.
func (r Request) Tools() []string {
	var out []string
	for _, t := range r.get("tools").Array() {
		out = append(out, t.Get("name").String())
	}
	return out
}

// ToolResults lists the tool_result blocks of the last user message: what the
// model is being told about the tools it just called.
func (r Request) ToolResults() []ToolResult {
	msgs := r.Messages().Array()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Get("role").String() == "user" {
			return toolResults(msgs[i])
		}
	}
	return nil
}

// AllToolResults lists every tool_result block in the conversation, in order.
func (r Request) AllToolResults() []ToolResult {
	var out []ToolResult
	for _, m := range r.Messages().Array() {
		out = append(out, toolResults(m)...)
	}
	return out
}

func toolResults(m gjson.Result) []ToolResult {
	var out []ToolResult
	for _, b := range m.Get("content").Array() {
		if b.Get("type").String() != "tool_result" {
			continue
		}
		out = append(out, ToolResult{
			ToolUseID: b.Get("tool_use_id").String(),
			Content:   textOf(b.Get("content")),
			IsError:   b.Get("is_error").Bool(),
		})
	}
	return out
}

// LastUser is the text of the last user message, each tool_result in it
// rendered as "[tool_result]" (plus "[error]" for a failed one) followed by
// its content: what a scripted Func looks at to decide its next move.
func (r Request) LastUser() string {
	msgs := r.Messages().Array()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Get("role").String() != "user" {
			continue
		}
		c := msgs[i].Get("content")
		if !c.IsArray() {
			return c.String()
		}
		var sb strings.Builder
		for _, b := range c.Array() {
			if b.Get("type").String() != "tool_result" {
				sb.WriteString(b.Get("text").String())
				continue
			}
			sb.WriteString("[tool_result]")
			if b.Get("is_error").Bool() {
				sb.WriteString("[error]")
			}
			sb.WriteString(textOf(b.Get("content")))
		}
		return sb.String()
	}
	return ""
}

// Text is every text in the request (system, messages, tool results) joined:
// handy for "did the model see X anywhere" assertions.
func (r Request) Text() string {
	var sb strings.Builder
	sb.WriteString(r.System())
	for _, m := range r.Messages().Array() {
		sb.WriteString("\n")
		sb.WriteString(textOf(m.Get("content")))
		for _, tr := range toolResults(m) {
			sb.WriteString("\n")
			sb.WriteString(tr.Content)
		}
	}
	return sb.String()
}

// textOf flattens a string or an array of text blocks.
func textOf(v gjson.Result) string {
	if v.Type == gjson.String {
		return v.String()
	}
	var parts []string
	for _, b := range v.Array() {
		if b.Type == gjson.String {
			parts = append(parts, b.String())
		} else if t := b.Get("text"); t.Exists() {
			parts = append(parts, t.String())
		}
	}
	return strings.Join(parts, "\n")
}

// asyncLaunched is how claude's Agent tool result opens when it started
// the subagent in the background.
const asyncLaunched = "Async agent launched"

// AgentLaunched reports whether the last user message only says a
// background Agent was started (its work comes back later).
func (r Request) AgentLaunched() bool {
	for _, tr := range r.ToolResults() {
		if strings.Contains(tr.Content, asyncLaunched) {
			return true
		}
	}
	return false
}

// HandBack reports whether the last user message hands a subagent's work
// back: the <task-notification> of a background Agent, or the result of a
// foreground Agent (or Task) call of the last assistant turn.
func (r Request) HandBack() bool {
	if strings.Contains(r.LastUser(), "<task-notification>") {
		return true
	}
	msgs := r.Messages().Array()
	agents := map[string]bool{}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Get("role").String() != "assistant" {
			continue
		}
		for _, b := range msgs[i].Get("content").Array() {
			if n := b.Get("name").String(); b.Get("type").String() == "tool_use" && (n == "Agent" || n == "Task") {
				agents[b.Get("id").String()] = true
			}
		}
		break
	}
	for _, tr := range r.ToolResults() {
		if agents[tr.ToolUseID] && !strings.Contains(tr.Content, asyncLaunched) {
			return true
		}
	}
	return false
}
