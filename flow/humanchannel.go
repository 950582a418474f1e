package flow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/internal/atomicfile"
	"github.com/flowerhq/flower/internal/linesock"
	"github.com/flowerhq/flower/internal/mdsections"
	"github.com/flowerhq/flower/internal/redact"
	"github.com/flowerhq/flower/internal/textclip"
)

// ChannelSocketEnv names the socket `flower mcp-channel` relays to.
const ChannelSocketEnv = "FLOWER_CHANNEL_SOCKET"

// HumanChannel asks the person through an MCP stdio server that claude
// starts from --mcp-config (`flower mcp-channel`), which relays each tool
// call over a private Unix socket back to this process.
//
// Lifecycle: NewHumanChannel builds it and names its socket (SocketPath)
// without creating anything, so roles can put the socket into their specs
// before anything listens. Open starts the relay there and publishes it for
// `flower tell`; Close undoes both and may be called any number of times; a
// closed channel can be opened again at the same socket.
type HumanChannel struct {
	// LogPath receives every question and answer (问答记录.md); "" = no log.
	LogPath string
	// AmendPath is the document Amend appends to (the brief).
	AmendPath string
	// MaxAsks caps the questions (0 = no cap).
	MaxAsks int
	// Timeout is how long an ask waits. 0 means DefaultTimeout (1800 s);
	// NoWait (unattended) answers "timeout" at once; WaitForever never gives
	// up.
	Timeout time.Duration
	// Answerer is asked; nil: nobody is there (every ask times out).
	Answerer Answerer
	// Command starts the MCP server; default: this executable + "mcp-channel".
	Command []string
	// Server is the MCP server name (default "flower").
	Server string

	// OnInbox, when set, is told how many messages wait in the inbox each
	// time that changes (a message told, the inbox read): the terminal's
	// status line shows it.
	OnInbox func(waiting int)
	// OnRecord, when set, is given an event for each exchange with the
	// person: a message told and read (harness.EventMessage), a question
	// and its answer (harness.EventQuestion). The command writes them to
	// the run's record (`flower runs show`) and shows a read message at
	// the terminal.
	OnRecord func(harness.Event)

	mu       sync.Mutex
	asks     int
	inbox    []string
	step     string // the workflow step running now (SetStep)
	pointer  string // the published run pointer file (Open)
	sockPath string // named at first use (SocketPath), never changed
	sock     *linesock.Server
}

// Ask timeouts (HumanChannel.Timeout, StarterOptions.Timeout).
const (
	// DefaultTimeout is 1800 s; a zero Timeout means it.
	DefaultTimeout = 1800 * time.Second
	// NoWait is unattended: an ask answers "timeout"
	// at once (recorded answers from a file are still read). Any negative
	// Timeout other than WaitForever means the same.
	NoWait time.Duration = -1
	// WaitForever: an ask waits until it is answered.
	WaitForever time.Duration = math.MinInt64
)

// NewHumanChannel returns a channel that waits DefaultTimeout (1800 s) for
// an answer and asks without a cap.
func NewHumanChannel(logPath, amendPath string, answerer Answerer) *HumanChannel {
	return &HumanChannel{LogPath: logPath, AmendPath: amendPath, Answerer: answerer, Timeout: DefaultTimeout}
}

func (h *HumanChannel) server() string {
	if h.Server == "" {
		return "flower"
	}
	return h.Server
}

// ToolName implements Channel.
func (h *HumanChannel) ToolName() string { return "mcp__" + h.server() + "__ask" }

// InboxToolName implements Channel.
func (h *HumanChannel) InboxToolName() string { return "mcp__" + h.server() + "__inbox" }

// MCPServers implements Channel: the server reaches the relay at
// SocketPath, which listens while the channel is open.
func (h *HumanChannel) MCPServers() map[string]any {
	cmd := h.Command
	if len(cmd) == 0 {
		exe, _ := os.Executable()
		cmd = []string{exe, "mcp-channel"}
	}
	return map[string]any{h.server(): map[string]any{
		"type": "stdio", "command": cmd[0], "args": cmd[1:],
		"env": map[string]string{ChannelSocketEnv: h.socketPath()},
	}}
}

// socketPath is where the relay listens while the channel is open. It is
// named on first use (a fresh private folder in the temp dir, not created
// until Open) and never changes.
func (h *HumanChannel) socketPath() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sockPath == "" {
		h.sockPath = linesock.FreshPath("flower-ch-")
	}
	return h.sockPath
}

// Open starts the relay at SocketPath and, when runDir is set, publishes it
// in <runDir>/<run>/channel.json (0600) so that `flower tell` in workspace
// finds this run; runDir "" publishes nothing. Opening an open channel
// starts nothing new. When Open fails, nothing is left open.
func (h *HumanChannel) Open(runDir, run, workspace string) error {
	if err := h.listen(); err != nil {
		return err
	}
	if runDir == "" {
		return nil
	}
	if err := h.publish(runDir, run, workspace); err != nil {
		h.Close()
		return err
	}
	return nil
}

// listen starts the relay (idempotent).
func (h *HumanChannel) listen() error {
	path := h.socketPath()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sock != nil {
		return nil
	}
	sock, err := linesock.ListenAt(path, 0, h.handle)
	if err != nil {
		return fmt.Errorf("flow: channel: %w", err)
	}
	h.sock = sock
	return nil
}

// isOpen reports whether the relay listens.
func (h *HumanChannel) isOpen() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sock != nil
}

// Close stops the relay, removes its socket and the published pointer; a
// second Close does nothing.
func (h *HumanChannel) Close() error {
	h.mu.Lock()
	sock := h.sock
	h.sock = nil
	pointer := h.pointer
	h.pointer = ""
	h.mu.Unlock()
	if pointer != "" {
		os.Remove(pointer)
	}
	if sock == nil {
		return nil
	}
	return sock.Close() // an ask still waiting gets a cancelled context
}

// relayRequest is one line from `flower mcp-channel`.
type relayRequest struct {
	Op string `json:"op"` // "ask" or "inbox"
	Question
}

// relayResponse is the one line sent back.
type relayResponse struct {
	Answer
	Step     string   `json:"step,omitempty"` // tell: the step that received it
	Messages []string `json:"messages,omitempty"`
	Left     int      `json:"left,omitempty"` // inbox: messages still waiting after this page
	Error    string   `json:"error,omitempty"`
}

// handle answers one relay line (the socket is a linesock.Server).
func (h *HumanChannel) handle(ctx context.Context, line []byte) []byte {
	var req relayRequest
	err := json.Unmarshal(line, &req)
	var resp relayResponse
	switch {
	case err != nil:
		resp.Error = err.Error()
	case req.Op == "ask":
		a, aerr := h.Ask(ctx, req.Question)
		resp.Answer = a
		if aerr != nil {
			resp.Error = aerr.Error()
		}
	case req.Op == "inbox":
		resp.Messages, resp.Left = h.takeInbox()
	case req.Op == "tell":
		step, lerr := h.Tell(req.Text)
		resp.Step, resp.State = step, Answered
		if lerr != nil {
			resp.Error = lerr.Error()
		}
	default:
		resp.Error = "unknown op " + req.Op
	}
	b, _ := json.Marshal(resp)
	return b
}

// unattendedText and friends are what the model reads when nobody answers.
const (
	unattendedText = "无人回答(无人值守或超时)。请按最稳妥的理解自行决定,并把这个假设写明。"
	maxAsksText    = "提问次数已用完。请按最稳妥的理解自行决定,并把这个假设写明。"
	refusedText    = "对方没有回答这个问题。请按最稳妥的理解自行决定,并把这个假设写明。"
)

// instant is implemented by answerers that never make anyone wait (a file
// of answers): they are consulted even when Timeout is 0.
type instant interface{ Instant() bool }

// Ask implements Channel: it counts against MaxAsks, waits as Timeout says,
// and logs the exchange.
func (h *HumanChannel) Ask(ctx context.Context, q Question) (Answer, error) {
	h.mu.Lock()
	if h.MaxAsks > 0 && h.asks >= h.MaxAsks {
		h.mu.Unlock()
		a := Answer{State: Refused, Text: maxAsksText}
		return a, h.log(q, a)
	}
	h.asks++
	step := h.step
	h.mu.Unlock()
	a := h.wait(ctx, q)
	h.record(harness.EventQuestion, step, harness.ChannelEvent{State: a.State, Text: q.Text, Options: q.Options, Answer: a.Text})
	return a, h.log(q, a)
}

func (h *HumanChannel) wait(ctx context.Context, q Question) Answer {
	if h.Answerer == nil {
		return Answer{State: Timeout, Text: unattendedText}
	}
	timeout := h.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if in, ok := h.Answerer.(instant); timeout < 0 && timeout != WaitForever && !(ok && in.Instant()) {
		return Answer{State: Timeout, Text: unattendedText}
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	text, ok, err := h.Answerer.Answer(ctx, q)
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (err == nil && !ok):
		return Answer{State: Timeout, Text: unattendedText}
	case err != nil:
		return Answer{State: Refused, Text: refusedText}
	case strings.TrimSpace(text) == "":
		return Answer{State: Refused, Text: refusedText}
	}
	return Answer{State: Answered, Text: strings.TrimSpace(text)}
}

// log appends one exchange to LogPath.
func (h *HumanChannel) log(q Question, a Answer) error {
	var sb strings.Builder
	sb.WriteString(strings.TrimSpace(q.Text) + "\n")
	for i, o := range q.Options {
		sb.WriteString(fmt.Sprintf("%d. %s\n", i+1, o))
	}
	sb.WriteString("\n**答** [" + a.State + "]: " + a.Text)
	from := ""
	if q.From != "" {
		from = " (" + q.From + ")"
	}
	return h.logLine("## 问 "+time.Now().Format("2006-01-02 15:04:05")+from, sb.String())
}

// logLine appends one entry (a heading and its body) to LogPath.
func (h *HumanChannel) logLine(heading, body string) error {
	if h.LogPath == "" {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(h.LogPath), 0o700); err != nil {
		return fmt.Errorf("flow: channel log: %w", err)
	}
	if err := atomicfile.NotALink(filepath.Dir(h.LogPath)); err != nil {
		return fmt.Errorf("flow: channel log: %w", err)
	}
	// O_NOFOLLOW: a symlink planted at the log is never appended through.
	f, err := os.OpenFile(h.LogPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("flow: channel log: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteString(redact.Process().String(heading + "\n\n" + body + "\n\n")); err != nil {
		return fmt.Errorf("flow: channel log: %w", err)
	}
	return nil
}

// Post queues a message from the person for the inbox tool.
func (h *HumanChannel) Post(msg string) {
	h.mu.Lock()
	h.inbox = append(h.inbox, msg)
	n, cb := len(h.inbox), h.OnInbox
	h.mu.Unlock()
	if cb != nil {
		cb(n)
	}
}

// Tell is a message the person sends while the flow runs (`flower tell`):
// it is queued for the coordinator's next inbox call and recorded in the
// Q&A log with its time. It returns the step running when it arrived.
func (h *HumanChannel) Tell(msg string) (step string, err error) {
	msg = strings.TrimSpace(msg)
	h.mu.Lock()
	step = h.step
	h.mu.Unlock()
	if msg == "" {
		return step, errors.New("empty message")
	}
	h.Post(msg)
	h.record(harness.EventMessage, step, harness.ChannelEvent{State: harness.MessageTold, Text: msg})
	return step, h.logLine("## 留言 "+time.Now().Format("2006-01-02 15:04:05")+stepNote(step), msg+"\n\n**状态**: 等协调者下次查看 inbox 时取走")
}

// record hands one channel event to OnRecord, if set.
func (h *HumanChannel) record(kind, step string, ev harness.ChannelEvent) {
	h.mu.Lock()
	cb := h.OnRecord
	h.mu.Unlock()
	if cb != nil {
		cb(eventOf(kind, step, ev))
	}
}

// markRead records that an inbox call handed msgs to the model: an event
// each, and one read mark in the Q&A log, so its "等…取走" entries are
// answered rather than waiting forever.
func (h *HumanChannel) markRead(msgs []string) {
	if len(msgs) == 0 {
		return
	}
	h.mu.Lock()
	step := h.step
	h.mu.Unlock()
	var body strings.Builder
	for _, m := range msgs {
		h.record(harness.EventMessage, step, harness.ChannelEvent{State: harness.MessageRead, Text: m})
		body.WriteString("> " + strings.Join(strings.Fields(textclip.Mark(m, 200)), " ") + "\n")
	}
	body.WriteString("\n**状态**: 协调者已取走")
	_ = h.logLine("## 已读 "+time.Now().Format("2006-01-02 15:04:05")+stepNote(step), body.String())
}

func stepNote(step string) string {
	if step == "" {
		return ""
	}
	return " (" + step + ")"
}

// Inbox pages: one inbox call hands over at most inboxPage messages and
// inboxPageBytes of text (a tool result claude would otherwise cut); the
// rest wait for the next call, which the tool's text asks for.
const (
	inboxPage      = 20
	inboxPageBytes = 16 << 10
)

// takeInbox returns and clears the queued messages, one page of them (at
// least one message, however long), and how many still wait.
func (h *HumanChannel) takeInbox() (page []string, left int) {
	h.mu.Lock()
	size := 0
	n := 0
	for n < len(h.inbox) && n < inboxPage && (n == 0 || size+len(h.inbox[n]) <= inboxPageBytes) {
		size += len(h.inbox[n])
		n++
	}
	page = append([]string(nil), h.inbox[:n]...)
	h.inbox = h.inbox[n:]
	left = len(h.inbox)
	cb := h.OnInbox
	h.mu.Unlock()
	if cb != nil && n > 0 {
		cb(left)
	}
	h.markRead(page)
	return page, left
}

// Waiting is how many told messages no inbox call has taken yet.
func (h *HumanChannel) Waiting() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.inbox)
}

// SetStep implements Channel: the step a told message lands in.
func (h *HumanChannel) SetStep(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.step = name
}

// Asks returns how many questions were put to the person.
func (h *HumanChannel) Asks() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.asks
}

// Amend implements Channel: said goes into the brief at AmendPath (its 目标
// section, labelled); a file that is not a brief gets a labelled line
// appended. Words already in the file are not written twice.
func (h *HumanChannel) Amend(said, label string) (bool, error) {
	said = strings.TrimSpace(said)
	if h.AmendPath == "" || said == "" {
		return false, nil
	}
	old, err := os.ReadFile(h.AmendPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("flow: amend: %w", err)
	}
	if strings.Contains(string(old), said) {
		return false, nil
	}
	if b := ParseBrief(string(old)); b.Goal != "" {
		if _, err := b.Amend(said, label).Write(h.AmendPath); err != nil {
			return false, err
		}
		return true, nil
	}
	text := strings.TrimRight(string(old), "\n") + "\n\n【" + label + "】" + said + "\n"
	if err := mdsections.Write(h.AmendPath, strings.TrimLeft(text, "\n")); err != nil {
		return false, err
	}
	return true, nil
}
