package scripted

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/flowerhq/flower/internal/textclip"
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
	504: "upstream request timeout",
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
	f := reply.Fault
	if f != nil && f.Drop && f.DropAt == "headers" {
		reset(w)
		return
	}
	if f != nil && f.Status != 0 {
		typ, msg := f.Type, f.Message
		if typ == "" {
			typ = faultStatuses[f.Status]
		}
		if msg == "" {
			msg = defaultFaultMessages[f.Status]
		}
		if f.RetryAfter != "" {
			w.Header().Set("retry-after", f.RetryAfter)
		}
		writeError(w, f.Status, typ, msg)
		return
	}
	msg := s.message(req, reply)
	if !req.Stream() && f == nil {
		writeJSON(w, http.StatusOK, msg)
		return
	}
	s.stream(hr.Context(), w, msg, f)
}

// reset closes the client's connection with a TCP reset before any
// response byte.
func reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
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
// A fault f cuts it where f says (see Fault); nil streams it whole.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, msg map[string]any, f *Fault) {
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
	cutAt := func(point string) bool { return f != nil && f.Drop && f.DropAt == point }
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"] = []any{}
	start["stop_reason"] = nil
	send("message_start", map[string]any{"type": "message_start", "message": start})
	if cutAt("message_start") {
		return // the body ends cleanly: an intermediary that gave up
	}
	send("ping", map[string]any{"type": "ping"})
	if f != nil && f.Stall {
		<-ctx.Done()
		return
	}
	for f != nil && f.Drip {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
			send("ping", map[string]any{"type": "ping"})
		}
	}
	for i, b := range msg["content"].([]map[string]any) {
		var body, delta, field string
		switch b["type"] {
		case "text":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			body, delta, field = b["text"].(string), "text_delta", "text"
		case "tool_use":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			body, delta, field = string(b["input"].(json.RawMessage)), "input_json_delta", "partial_json"
		}
		if cutAt("") {
			panic(http.ErrAbortHandler)
		}
		if cutAt(b["type"].(string)) { // halfway through this block
			body = chunks(body, max(len(body)/2, 1))[0]
		}
		for _, chunk := range chunks(body, 64) {
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": delta, field: chunk}})
		}
		if cutAt(b["type"].(string)) {
			panic(http.ErrAbortHandler)
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	if f != nil && f.Drop { // a drop on an empty reply still cuts the stream
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
		cut := textclip.Boundary(s, n)
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
