package scripted

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/flowerhq/flower/internal/textclip"
)

// exchange is one line of a cassette: a Messages request, its normalized
// key, and the response the upstream gave.
type exchange struct {
	Key      string           `json:"key"` // RequestKey of Request.Body
	Request  exchangeRequest  `json:"request"`
	Response exchangeResponse `json:"response"`
}

// exchangeRequest is the recorded request: headers that matter only (never
// a credential).
type exchangeRequest struct {
	Method string            `json:"method"`
	Path   string            `json:"path"`
	Header map[string]string `json:"header,omitempty"`
	Body   json.RawMessage   `json:"body"`
}

// exchangeResponse is the recorded response: status, the headers that
// matter, and either the body or, for a stream, its events in order.
type exchangeResponse struct {
	Status int               `json:"status"`
	Header map[string]string `json:"header,omitempty"`
	Body   json.RawMessage   `json:"body,omitempty"`
	Events []Event           `json:"events,omitempty"`
}

// Event is one Server-Sent Event: its name and its data (JSON when the data
// is JSON, else a JSON string).
type Event struct {
	Event string          `json:"event,omitempty"`
	Data  json.RawMessage `json:"data"`
}

// responseHeaders are the response headers a cassette keeps and replays.
var responseHeaders = []string{"Content-Type", "Request-Id", "Retry-After", "X-Should-Retry"}

// requestHeaders are the request headers a cassette keeps (for people
// reading it; they are not part of the key).
var requestHeaders = []string{"Content-Type", "Anthropic-Version", "Anthropic-Beta", "User-Agent"}

// cassette is a loaded cassette being replayed.
type cassette struct {
	path      string
	exchanges []exchange
	keys      []string // recomputed with this version's normalization
	leaves    [][]leaf
	mu        sync.Mutex
	used      []bool
}

// loadCassette reads a cassette file: one exchange per line.
func loadCassette(path string) ([]exchange, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("scripted: cassette: %w", err)
	}
	defer f.Close()
	var out []exchange
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 512<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var e exchange
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("scripted: cassette %s line %d: %v", path, n, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("scripted: cassette %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("scripted: cassette %s has no exchanges (record one with: flower model record --upstream URL --out %s)", path, path)
	}
	return out, nil
}

// ServeCassette replays the cassette at path on addr (e.g. "127.0.0.1:0").
// A Messages request gets the response of the first not yet replayed
// exchange with the same normalized key (so repeated keys answer in
// recorded order), with the same status, headers and event stream; when
// the request runs in another working directory than the recorded one, that
// directory is rewritten in the response too. claude's helper requests that
// were not recorded get the built-in answer; any other unmatched request is
// a 400 naming the closest recorded request and the first difference.
// Server.Requests() lists every request, Conversation "cassette" and Reply
// the exchange's line index.
func ServeCassette(path, addr string, opts ...Option) (*Server, error) {
	exchanges, err := loadCassette(path)
	if err != nil {
		return nil, err
	}
	c := &cassette{path: path, exchanges: exchanges, used: make([]bool, len(exchanges))}
	for _, e := range exchanges {
		c.keys = append(c.keys, RequestKey(e.Request.Body))
		c.leaves = append(c.leaves, nil)
	}
	srv := &Server{cassette: c, next: map[string][]int{}}
	return srv.listen(addr, opts)
}

// cassetteName is the Conversation recorded for replayed requests.
const cassetteName = "cassette"

// take finds the exchange for body; on a miss it says why.
func (c *cassette) take(body []byte) (int, string) {
	key := RequestKey(body)
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := 0
	for i, k := range c.keys {
		if k != key {
			continue
		}
		if !c.used[i] {
			c.used[i] = true
			return i, ""
		}
		seen++
	}
	if seen > 0 {
		return -1, fmt.Sprintf("cassette %s: all %d recorded exchanges for this request were already replayed (re-record to add more)", c.path, seen)
	}
	return -1, c.closest(body)
}

// closest names the recorded request nearest to body and where they first
// differ (the one whose first difference comes latest).
func (c *cassette) closest(body []byte) string {
	got := leaves(NormalizedRequest(body))
	best, bestDiff := -1, difference{index: -1}
	for i, e := range c.exchanges {
		if c.leaves[i] == nil {
			c.leaves[i] = leaves(NormalizedRequest(e.Request.Body))
		}
		d, _ := firstDifference(c.leaves[i], got)
		if d.index > bestDiff.index || d.index == bestDiff.index && d.common > bestDiff.common {
			best, bestDiff = i, d
		}
	}
	first := Request{Body: c.exchanges[best].Request.Body}
	return fmt.Sprintf("cassette %s: no recorded exchange matches this request; closest is exchange %d (line %d, first user message %q); first difference at %s",
		c.path, best, best+1, textclip.Bytes(withoutReminders(first.FirstUser()), 80), bestDiff.describe())
}

// replay answers req from the cassette.
func (s *Server) replay(w http.ResponseWriter, hr *http.Request, body []byte, req *Request) {
	i, miss := s.cassette.take(body)
	if i < 0 {
		if req.auxiliary() {
			req.Conversation, req.Status = auxiliaryName, http.StatusOK
			s.log(*req)
			s.answer(w, hr, *req, auxiliaryReply(*req))
			return
		}
		req.Status, req.Error = http.StatusBadRequest, "scripted model: "+miss
		s.log(*req)
		s.mu.Lock()
		if s.logTo != nil {
			fmt.Fprintln(s.logTo, "    "+miss)
		}
		s.mu.Unlock()
		writeError(w, http.StatusBadRequest, "invalid_request_error", req.Error)
		return
	}
	e := s.cassette.exchanges[i]
	req.Conversation, req.Reply, req.Status = cassetteName, i, e.Response.Status
	s.log(*req)
	resp := e.Response
	if from, to := cwdOf(e.Request.Body), cwdOf(body); from != "" && to != "" && from != to {
		resp = relocate(resp, from, to)
	}
	writeRecorded(w, resp)
}

// writeRecorded writes a recorded response: headers, status, then the body
// or each event, flushed as it goes.
func writeRecorded(w http.ResponseWriter, resp exchangeResponse) {
	for k, v := range resp.Header {
		w.Header().Set(k, v)
	}
	if len(resp.Events) > 0 && w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "text/event-stream")
	}
	w.WriteHeader(resp.Status)
	flusher, _ := w.(http.Flusher)
	for _, ev := range resp.Events {
		var sb strings.Builder
		if ev.Event != "" {
			sb.WriteString("event: " + ev.Event + "\n")
		}
		sb.WriteString("data: " + dataText(ev.Data) + "\n\n")
		if _, err := w.Write([]byte(sb.String())); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
	if len(resp.Events) == 0 {
		w.Write(resp.Body)
	}
}

// dataText is an event's data as it went over the wire.
func dataText(d json.RawMessage) string {
	var s string
	if len(d) > 0 && d[0] == '"' && json.Unmarshal(d, &s) == nil {
		return s
	}
	return string(d)
}

// relocate rewrites the recorded working directory into the current one in
// a response, so tool calls land in the replaying run's workspace. A path
// may be split across stream deltas, so each block's consecutive text and
// JSON deltas are joined into one first.
func relocate(resp exchangeResponse, from, to string) exchangeResponse {
	fromJS, _ := json.Marshal(from)
	toJS, _ := json.Marshal(to)
	rewrite := func(b []byte) json.RawMessage {
		b = bytes.ReplaceAll(b, fromJS[1:len(fromJS)-1], toJS[1:len(toJS)-1])
		return bytes.ReplaceAll(b, []byte(ProjectDirName(from)), []byte(ProjectDirName(to)))
	}
	out := resp
	out.Body = rewrite(resp.Body)
	out.Events = nil
	for _, ev := range joinDeltas(resp.Events) {
		out.Events = append(out.Events, Event{Event: ev.Event, Data: rewrite(ev.Data)})
	}
	return out
}

// joinDeltas merges runs of text_delta or input_json_delta events of one
// content block into a single event.
func joinDeltas(events []Event) []Event {
	var out []Event
	var prev struct {
		index     int64
		kind, key string
		text      strings.Builder
		open      bool
	}
	flush := func() {
		if !prev.open {
			return
		}
		data, _ := json.Marshal(map[string]any{"type": "content_block_delta", "index": prev.index,
			"delta": map[string]any{"type": prev.kind, prev.key: prev.text.String()}})
		out = append(out, Event{Event: "content_block_delta", Data: data})
		prev.open = false
		prev.text.Reset()
	}
	for _, ev := range events {
		r := Request{Body: ev.Data}
		kind := r.get("delta.type").String()
		key := map[string]string{"text_delta": "text", "input_json_delta": "partial_json"}[kind]
		if r.get("type").String() != "content_block_delta" || key == "" {
			flush()
			out = append(out, ev)
			continue
		}
		index := r.get("index").Int()
		if prev.open && (prev.index != index || prev.kind != kind) {
			flush()
		}
		prev.index, prev.kind, prev.key, prev.open = index, kind, key, true
		prev.text.WriteString(r.get("delta." + key).String())
	}
	flush()
	return out
}
