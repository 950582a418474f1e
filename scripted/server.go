package scripted

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/flowerhq/flower/internal/textclip"
)

// Server serves a Script over HTTP on loopback and records every request.
type Server struct {
	script   *Script
	cassette *cassette // set by ServeCassette instead of script
	ln       net.Listener
	srv      *http.Server

	mu       sync.Mutex
	next     map[string][]int // next reply per conversation, per claude session
	requests []Request
	logTo    io.Writer
	seq      int
	toolSeq  int
	record   *os.File
	agents   map[string]string // subagent type by the prompt of the Agent call that started it (noteAgents)
}

// Option configures a Server.
type Option func(*Server) error

// WithRecordFile appends every request, as one JSON line, to path.
func WithRecordFile(path string) Option {
	return func(s *Server) error {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("scripted: record file: %w", err)
		}
		s.record = f
		return nil
	}
}

// WithLog writes one line per request to w: its number, session,
// conversation, reply index, model and status (`flower model serve -v`).
func WithLog(w io.Writer) Option {
	return func(s *Server) error {
		s.logTo = w
		return nil
	}
}

// Start validates the script and serves it on addr (e.g. "127.0.0.1:0").
func Start(s *Script, addr string, opts ...Option) (*Server, error) {
	if s == nil {
		return nil, errors.New("scripted: nil script")
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	srv := &Server{script: s, next: map[string][]int{}}
	return srv.listen(addr, opts)
}

// listen applies opts and starts serving on addr.
func (s *Server) listen(addr string, opts []Option) (*Server, error) {
	for _, o := range opts {
		if err := o(s); err != nil {
			return nil, err
		}
	}
	var err error
	if s.ln, s.srv, err = serveHTTP(addr, s); err != nil {
		return nil, err
	}
	return s, nil
}

// serveHTTP serves h on a new listener at addr (the Server's and the
// Recorder's one way to listen).
func serveHTTP(addr string, h http.Handler) (net.Listener, *http.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("scripted: listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return ln, srv, nil
}

// URL is the base URL to give claude as ANTHROPIC_BASE_URL.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Addr is the listening address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server at once; open streams are cut.
func (s *Server) Close() error {
	err := s.srv.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.record != nil {
		s.record.Close()
		s.record = nil
	}
	return err
}

// Requests returns a copy of every request so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// RequestsFor returns the requests routed to the named conversation.
func (s *Server) RequestsFor(conversation string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Conversation == conversation {
			out = append(out, r)
		}
	}
	return out
}

// Unmatched returns the requests no conversation answered (including 404s).
func (s *Server) Unmatched() []Request { return s.RequestsFor("") }

// ServeHTTP routes one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(hr.Body, 256<<20))
	req := Request{Time: time.Now(), Method: hr.Method, Path: hr.URL.Path, Reply: -1, Session: sessionOf(hr, body)}
	if json.Valid(body) {
		req.Body = body
	}
	path := strings.TrimSuffix(hr.URL.Path, "/")
	switch {
	case hr.Method == http.MethodPost && path == "/v1/messages/count_tokens":
		req.Status = http.StatusOK
		s.log(req)
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": len(body)/4 + 1})
	case hr.Method == http.MethodPost && path == "/v1/messages" && s.cassette != nil:
		s.replay(w, hr, body, &req)
	case hr.Method == http.MethodPost && path == "/v1/messages":
		req.Agent = s.agentOf(req)
		reply, ok, why := s.route(&req)
		if !ok {
			req.Status, req.Error = http.StatusBadRequest, unmatchedMessage(req, why)
			s.log(req)
			writeError(w, http.StatusBadRequest, "invalid_request_error", req.Error)
			return
		}
		req.Status = statusOf(reply)
		s.noteAgents(reply)
		s.log(req)
		s.answer(w, hr, req, reply)
	default:
		req.Status = http.StatusNotFound
		s.log(req)
		writeError(w, http.StatusNotFound, "not_found_error",
			fmt.Sprintf("scripted model: no route for %s %s", hr.Method, hr.URL.Path))
	}
}

// auxiliaryName is the Conversation recorded for claude's helper requests.
const auxiliaryName = "(auxiliary)"

// route picks the conversation and reply for req and fills its routing
// fields. Claude's helper requests get the built-in answer; every other
// request takes the next reply of its session, so each new claude session
// starts every conversation from its first reply.
// A request no conversation answers gets why: the conversations that
// matched but had nothing for it.
func (s *Server) route(req *Request) (reply Reply, ok bool, why []string) {
	if req.auxiliary() {
		req.Conversation = auxiliaryName
		return auxiliaryReply(*req), true, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	counters := func(session string) []int {
		if s.next[session] == nil {
			s.next[session] = make([]int, len(s.script.Conversations))
		}
		return s.next[session]
	}
	for i, c := range s.script.Conversations {
		if !c.Match.matches(*req) {
			continue
		}
		next := counters(req.Session)
		if c.AcrossSessions {
			next = counters(acrossSessions)
		}
		if n := next[i]; n < len(c.Replies) {
			switch r := c.Replies[n]; {
			case r.HandBack && req.AgentLaunched():
				req.Conversation = c.Name
				return launchedReply, true, nil
			case r.HandBack && !req.HandBack():
				why = append(why, fmt.Sprintf("conversation %q keeps reply %d for the Agent hand-back, and this is not one", c.Name, n))
				continue
			}
			next[i]++
			req.Conversation, req.Reply = c.Name, n
			return c.Replies[n], true, nil
		}
		if c.Func != nil {
			req.Conversation = c.Name
			return c.Func(*req), true, nil
		}
		where := "in this claude session"
		if c.AcrossSessions {
			where = "(across_sessions: in all sessions together)"
		}
		why = append(why, fmt.Sprintf("conversation %q matched but gave all its %d replies %s", c.Name, len(c.Replies), where))
	}
	return Reply{}, false, why
}

// acrossSessions keys the reply counters of AcrossSessions conversations
// (no claude session id contains a NUL).
const acrossSessions = "\x00across"

// launchedReply answers the "background Agent launched" tool result ahead
// of a hand_back reply: the coordinator's turn ends, waiting.
var launchedReply = Reply{Text: "子代理已经派出,等它汇报。"}

func (s *Server) log(req Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	req.Seq = s.seq
	s.requests = append(s.requests, req)
	if s.record != nil {
		line, _ := json.Marshal(req)
		s.record.Write(append(line, '\n'))
	}
	if s.logTo != nil {
		fmt.Fprintln(s.logTo, logLine(req))
	}
}

// logLine is the one-line account of a request that -v prints.
func logLine(r Request) string {
	conv, reply := r.Conversation, "-"
	if conv == "" {
		conv = "(unmatched)"
	}
	if r.Reply >= 0 {
		reply = fmt.Sprint(r.Reply)
	}
	session := r.Session
	if len(session) > 8 {
		session = session[:8]
	}
	if session == "" {
		session = "-"
	}
	model := r.Model()
	if model == "" {
		model = "-"
	}
	return fmt.Sprintf("#%d %s %s session=%s conversation=%s reply=%s model=%s status=%d",
		r.Seq, r.Method, r.Path, session, conv, reply, model, r.Status)
}

func statusOf(r Reply) int {
	if r.Fault != nil && r.Fault.Status != 0 {
		return r.Fault.Status
	}
	return http.StatusOK
}

// unmatchedMessage says what arrived in the terms a script matches by: the
// role flower gave it, the start of its first user message (the system
// prompt opens alike for every role, so only its role line is shown), the
// model, and why the conversations that matched had nothing for it.
func unmatchedMessage(r Request, why []string) string {
	role := r.Role()
	switch {
	case r.Agent != "" && role != "":
		role += ", subagent type " + r.Agent
	case r.Agent != "":
		role = "subagent type " + r.Agent
	case role == "":
		role = "none of " + roleNames()
	}
	what := "no script entry matches this request"
	if len(why) > 0 {
		what = "the script entries that match this request have nothing left for it"
	}
	msg := fmt.Sprintf("scripted model: %s (role %s; first user message %q; model %q; system prompt %q)", what,
		role, textclip.Bytes(strings.TrimSpace(withoutReminders(r.FirstUser())), 160), r.Model(), textclip.Bytes(systemRoleLine(r.System()), 80))
	if len(why) > 0 {
		msg += ": " + strings.Join(why, "; ")
	}
	return msg
}

// systemRoleLine is the line of a system prompt that names the role (the
// first line that opens with 你是), else the prompt's start after claude's
// billing header.
func systemRoleLine(system string) string {
	lines := strings.Split(system, "\n")
	for _, l := range lines {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "你是") {
			return l
		}
	}
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "x-anthropic-billing-header:") {
			return l
		}
	}
	return ""
}

// withoutReminders drops the <system-reminder> blocks claude puts before the
// prompt, so an error names what the person or the agent actually asked.
func withoutReminders(s string) string {
	for {
		i := strings.Index(s, "<system-reminder>")
		if i < 0 {
			return s
		}
		j := strings.Index(s[i:], "</system-reminder>")
		if j < 0 {
			return s[:i]
		}
		s = s[:i] + s[i+j+len("</system-reminder>"):]
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", "req_scripted")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, map[string]any{
		"type":  "error",
		"error": map[string]any{"type": typ, "message": msg},
	})
}
