package scripted

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// defaultFaultMessages are the texts the real API sends for each fault.
var defaultFaultMessages = map[int]string{
	400: "prompt is too long: 210000 tokens > 200000 maximum",
	401: "invalid x-api-key",
	403: "permission denied",
	404: "not found",
	413: "request too large",
	429: "rate limited",
	500: "Internal server error",
	502: "bad gateway",
	503: "service unavailable",
	529: "Overloaded",
}

// answer writes reply as a fault, an SSE stream or a JSON message.
func (s *Server) answer(w http.ResponseWriter, hr *http.Request, req Request, reply Reply) {
	if reply.DelayMS > 0 {
		select {
		case <-time.After(time.Duration(reply.DelayMS) * time.Millisecond):
		case <-hr.Context().Done():
			return
		}
	}
	if f := reply.Fault; f != nil && !f.Drop {
		typ, msg := f.Type, f.Message
		if typ == "" {
			typ = faultStatuses[f.Status]
		}
		if msg == "" {
			msg = defaultFaultMessages[f.Status]
		}
		writeError(w, f.Status, typ, msg)
		return
	}
	msg := s.message(req, reply)
	if !req.Stream() && (reply.Fault == nil || !reply.Fault.Drop) {
		writeJSON(w, http.StatusOK, msg)
		return
	}
	s.stream(w, msg, reply.Fault != nil)
}

// message builds the full assistant message for reply.
func (s *Server) message(req Request, reply Reply) map[string]any {
	s.mu.Lock()
	s.toolSeq++
	n := s.toolSeq
	s.mu.Unlock()
	var content []map[string]any
	stop := reply.StopReason
	for i, b := range reply.content() {
		switch b.Type {
		case "text":
			content = append(content, map[string]any{"type": "text", "text": b.Text})
		case "tool_use":
			id := b.ID
			if id == "" {
				id = fmt.Sprintf("toolu_%04d_%d", n, i)
			}
			input := json.RawMessage(b.Input)
			if len(input) == 0 {
				input = json.RawMessage(`{}`)
			}
			content = append(content, map[string]any{"type": "tool_use", "id": id, "name": b.Name, "input": input})
			if stop == "" {
				stop = "tool_use"
			}
		}
	}
	if stop == "" {
		stop = "end_turn"
	}
	if content == nil {
		content = []map[string]any{}
	}
	model := req.Model()
	if model == "" {
		model = "claude-scripted"
	}
	return map[string]any{
		"id": fmt.Sprintf("msg_scripted_%04d", n), "type": "message", "role": "assistant",
		"model": model, "content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": usageOf(reply.Usage),
	}
}

func usageOf(u *Usage) map[string]any {
	if u == nil {
		u = &Usage{InputTokens: 10, OutputTokens: 5}
	}
	return map[string]any{
		"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens,
		"cache_read_input_tokens": u.CacheReadInputTokens, "cache_creation_input_tokens": u.CacheCreationInputTokens,
	}
}

// stream writes msg as Server-Sent Events the way the Messages API does.
// With drop set, the connection is cut after the first content block starts.
func (s *Server) stream(w http.ResponseWriter, msg map[string]any, drop bool) {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("request-id", "req_scripted")
	w.WriteHeader(http.StatusOK)
	send := func(event string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"] = []any{}
	start["stop_reason"] = nil
	send("message_start", map[string]any{"type": "message_start", "message": start})
	send("ping", map[string]any{"type": "ping"})
	for i, b := range msg["content"].([]map[string]any) {
		switch b["type"] {
		case "text":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			if drop {
				panic(http.ErrAbortHandler)
			}
			for _, chunk := range chunks(b["text"].(string), 64) {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "text_delta", "text": chunk}})
			}
		case "tool_use":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			if drop {
				panic(http.ErrAbortHandler)
			}
			input := string(b["input"].(json.RawMessage))
			for _, chunk := range chunks(input, 64) {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": chunk}})
			}
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	if drop { // a drop on an empty reply still cuts the stream
		panic(http.ErrAbortHandler)
	}
	send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": msg["stop_reason"], "stop_sequence": nil}, "usage": msg["usage"]})
	send("message_stop", map[string]any{"type": "message_stop"})
}

// chunks splits s into pieces of at most n bytes without splitting a rune.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !utf8RuneStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			cut = n
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" || len(out) == 0 {
		out = append(out, s)
	}
	return out
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
