package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/flowerhq/flower/internal/child"
)

// maxLine is the stream-json line cap: large tool results arrive as one line.
const maxLine = 64 << 20

// proc is one running claude under its supervisor (internal/child: the
// step's tree dies with flower), stdin kept open for control requests until
// the first result. It performs what the stream machine decides; it decides
// nothing.
type proc struct {
	cmd      *exec.Cmd
	lifeline *os.File // the supervisor's lifeline, held until Wait returned
	mu       sync.Mutex
	stdin    *os.File // nil once closed
	reqs     int
	words    string
	sentInt  bool
	intC     chan struct{} // an interrupt was sent (buffered 1)
	stderr   *tailBuffer
	spool    *spool        // where the rest of big stream texts goes (the step's folder)
	errDone  chan struct{} // closed once the stderr reader reached EOF
	exited   chan struct{} // closed once Wait returned
}

// newProc prepares claude as a contained child, supervised by flower-hook
// (hook). The caller starts it with start; supervise ends it on every path.
// The stream machine answers cancellation itself (SIGTERM first, SIGKILL of
// the tree after the stop grace).
func newProc(hook, claude string, args, env []string, dir string) *proc {
	cmd := child.Supervised(hook, claude, args...)
	cmd.Env = env
	cmd.Dir = dir
	return &proc{cmd: cmd, stderr: &tailBuffer{max: 16 << 10}, errDone: make(chan struct{}),
		exited: make(chan struct{}), intC: make(chan struct{}, 1)}
}

// start launches the process with its three streams as plain pipes (so
// Wait, and with it the exit the machine is told of, never waits for a
// grandchild holding one) and returns the stdout reader. The stderr reader
// is joined in finish before the tail is read.
func (p *proc) start() (*os.File, error) {
	var ends [6]*os.File // inR inW outR outW errR errW
	for i := 0; i < 6; i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll(ends[:i])
			return nil, err
		}
		ends[i], ends[i+1] = r, w
	}
	lr, lw, err := child.Lifeline(p.cmd)
	if err != nil {
		closeAll(ends[:])
		return nil, err
	}
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = ends[0], ends[3], ends[5]
	err = startPrivate(p.cmd)
	closeAll([]*os.File{ends[0], ends[3], ends[5], lr})
	if err != nil {
		closeAll([]*os.File{ends[1], ends[2], ends[4], lw})
		return nil, err
	}
	p.lifeline = lw
	p.stdin = ends[1]
	go func() {
		io.Copy(p.stderr, ends[4])
		ends[4].Close()
		close(p.errDone)
	}()
	go func() {
		p.cmd.Wait()
		if p.lifeline != nil {
			p.lifeline.Close()
		}
		close(p.exited)
	}()
	return ends[2], nil
}

func closeAll(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// send writes one JSON line to stdin.
func (p *proc) send(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stdin == nil {
		return errors.New("stdin closed")
	}
	_, err = p.stdin.Write(append(data, '\n'))
	return err
}

// sendUser writes the prompt as a stream-json user line.
func (p *proc) sendUser(prompt string) error {
	return p.send(map[string]any{
		"type": "user", "message": map[string]any{"role": "user", "content": prompt},
		"parent_tool_use_id": nil, "session_id": "",
	})
}

// sendInterrupt writes an interrupt control request with an id of kind.
func (p *proc) sendInterrupt(kind string) error {
	p.mu.Lock()
	p.reqs++
	id := fmt.Sprintf("flower_%s_%d", kind, p.reqs)
	p.mu.Unlock()
	return p.send(map[string]any{"type": "control_request", "request_id": id, "request": map[string]any{"subtype": "interrupt"}})
}

// interrupt sends the human's interrupt and remembers the words.
func (p *proc) interrupt(words string) error {
	p.mu.Lock()
	p.words = words
	p.sentInt = true
	p.mu.Unlock()
	err := p.sendInterrupt("int")
	select {
	case p.intC <- struct{}{}:
	default:
	}
	return err
}

func (p *proc) interrupted() (bool, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sentInt, p.words
}

// closeInput closes stdin; the CLI then finishes (background agents
// included) and exits.
func (p *proc) closeInput() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stdin != nil {
		p.stdin.Close()
		p.stdin = nil
	}
}

// stop ends the process politely, then by force: SIGTERM to the group,
// up to grace for the exit, SIGKILL.
func (p *proc) stop(grace time.Duration) {
	p.closeInput()
	child.Signal(p.cmd, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		child.Signal(p.cmd, syscall.SIGKILL)
		<-p.exited
	}
}

// lineMsg is one stdout line, or the reader's error.
type lineMsg struct {
	line    []byte
	big     *cutLine // the line is a skeleton: where its cut strings went
	err     error
	handled chan struct{} // a big line: the reader waits for release
}

// release lets the reader go on after a big line (a no-op for others).
func (m lineMsg) release() {
	if m.handled != nil {
		close(m.handled)
	}
}

// bigLine is the size from which the reader reads no further until the
// line is handled: two huge lines are then never in memory at once (a
// 50 MB text comes as an assistant line and again as the result).
const bigLine = 1 << 20

// readLines reads stdout lines into ch; it closes ch at EOF or error. Each
// line is its own slice of exactly its size, gathered in pieces and copied
// once (as bufio.Reader.ReadBytes does, but refusing a line over maxLine
// before it is all in memory). A line of bigLine bytes or more is never
// whole in memory: it is scanned as it arrives (a skeletonizer), its long
// strings cut in the line the machine gets and their rest written to sp.
func readLines(r io.Reader, ch chan<- lineMsg, sp *spool) {
	defer close(ch)
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, big, err := readLine(br, sp)
		if line != nil {
			m := lineMsg{line: line, big: big}
			if len(line) >= bigLine || big != nil {
				m.handled = make(chan struct{})
			}
			ch <- m
			if m.handled != nil {
				<-m.handled
				// The line and its pieces are garbage now (unless the
				// machine kept it as the result): collect them before the
				// next line is read, or the heap's goal (twice what was
				// live) lets them stand beside it and doubles the peak.
				runtime.GC()
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			ch <- lineMsg{err: err}
			return
		}
	}
}

// readLine is the next line without its newline (nil at a clean EOF); from
// bigLine bytes on, its skeleton and where its cut strings went.
func readLine(br *bufio.Reader, sp *spool) ([]byte, *cutLine, error) {
	var pieces [][]byte
	var k *skeletonizer
	n := 0
	for {
		chunk, err := br.ReadSlice('\n')
		if n += len(chunk); n > maxLine+1 {
			return nil, nil, bufio.ErrTooLong
		}
		if err == bufio.ErrBufferFull {
			if k != nil {
				k.feed(chunk)
				continue
			}
			pieces = append(pieces, bytes.Clone(chunk))
			if n >= bigLine {
				k = &skeletonizer{sp: sp}
				for _, p := range pieces {
					k.feed(p)
				}
				pieces = nil
			}
			continue
		}
		if err != nil && (err != io.EOF || n == 0) {
			return nil, nil, err
		}
		if k != nil {
			k.feed(bytes.TrimSuffix(chunk, []byte("\n")))
			line, big, ferr := k.finish()
			if ferr != nil {
				return nil, nil, fmt.Errorf("spooling a big stream line: %w", ferr)
			}
			return line, big, err
		}
		line := make([]byte, 0, n)
		for _, p := range pieces {
			line = append(line, p...)
		}
		line = bytes.TrimSuffix(append(line, chunk...), []byte("\n"))
		return line, nil, err
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(b), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// attemptOut is what one claude process produced.
type attemptOut struct {
	sessionID string
	text      string
	// structured is the result's structured_output (nil: none); text is
	// then the main thread's words, not the CLI's echo of the value.
	structured json.RawMessage
	err        error   // nil for a success; see outcome.go
	cost       float64 // the result's; a step counts its cost from its events (StepStats)
	context    int
	sawInit    bool
	// words are a human's interrupt words sent during the attempt, kept
	// whatever the outcome: an interrupt that lands in an attempt that
	// ends in a handoff goes to the successor session.
	words string
}

// watchers are the supervisor's callbacks into the Runtime.
type watchers struct {
	onLine   func(Event)
	onMirror func([]byte)
	onNear   func()
	onInit   func(sessionID string)
}

// supervise feeds the stream machine what it observes of the process and
// performs the actions the machine answers, until stdout ends; then it makes
// sure the group is dead and returns the machine's outcome.
func (p *proc) supervise(ctx context.Context, out *os.File, s *stream, h watchers) attemptOut {
	lines := make(chan lineMsg, 64)
	sp := p.spool
	if sp == nil {
		sp = &spool{dir: os.TempDir()}
	}
	go readLines(out, lines, sp)
	defer sp.remove() // the reader is done: supervise returns at the end of stdout
	defer func() {
		// Unblock and drain the reader so its goroutine ends.
		out.Close()
		go func() {
			for m := range lines {
				m.release()
			}
		}()
	}()
	s.begin(time.Now())
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	exited, done := p.exited, ctx.Done()
	for {
		var act action
		if n := s.next(); !n.IsZero() {
			timer.Reset(time.Until(n))
		}
		select {
		case m, ok := <-lines:
			if !ok {
				return p.finish(s)
			}
			act = p.consume(s, m, h)
		case <-p.intC:
			s.interrupted(time.Now())
		case <-timer.C:
			act = s.tick(time.Now())
			if ev, ok := s.takeStall(); ok {
				h.onLine(ev)
			}
		case <-done:
			done = nil
			act = s.cancel(context.Cause(ctx), time.Now()) // "hangup signal received" …
		case <-exited:
			exited = nil
			s.exit(time.Now())
		}
		p.perform(act, out)
	}
}

// consume hands one stdout line (or read error) to the machine and passes
// what it yields on to the Runtime.
func (p *proc) consume(s *stream, m lineMsg, h watchers) action {
	defer m.release()
	now := time.Now()
	if m.err != nil {
		return s.readError(m.err, now)
	}
	wasInit := s.sawInit
	s.big = m.big
	ev, emit, act := s.line(m.line, now)
	s.big = nil
	if !wasInit && s.sawInit {
		h.onInit(s.sessionID)
	}
	for _, mr := range s.mirror {
		if m.big != nil { // the mirror frame is this line: whole again
			whole, err := m.big.whole()
			if err != nil {
				h.onLine(Event{Kind: EventStore, Time: now, Data: EventData(ErrorEvent{Error: err.Error(), Op: "mirror"})})
				continue
			}
			mr = whole
		}
		h.onMirror(mr)
	}
	s.mirror = s.mirror[:0]
	if emit {
		h.onLine(ev)
	}
	if s.nearCrossed() {
		h.onNear()
	}
	return act
}

// perform carries out the machine's actions on the process.
func (p *proc) perform(act action, out *os.File) {
	if act&(actEndInput|actTerm) != 0 {
		p.closeInput()
	}
	if act&actInterrupt != 0 && p.sendInterrupt("handoff") != nil {
		act |= actKill
	}
	if act&actTerm != 0 {
		child.Signal(p.cmd, syscall.SIGTERM)
	}
	if act&actKill != 0 {
		child.Signal(p.cmd, syscall.SIGKILL)
	}
	if act&actCloseOut != 0 {
		out.Close()
	}
}

// finish makes sure claude and every tool of its group are gone, then
// returns the machine's outcome.
func (p *proc) finish(s *stream) attemptOut {
	p.closeInput()
	select {
	case <-p.exited:
	case <-time.After(s.timing.stop + s.timing.exit):
		child.Signal(p.cmd, syscall.SIGKILL)
		<-p.exited
	}
	// Tools the CLI started may outlive it in the group: reap them.
	child.Signal(p.cmd, syscall.SIGKILL)
	o := attemptOut{sessionID: s.sessionID, context: s.context, sawInit: s.sawInit}
	if s.results > 0 {
		o.text = s.final.Get("result").String()
		o.cost = s.final.Get("total_cost_usd").Float()
		if t := s.final.Get("result"); s.finalBig != nil {
			// A big text: read back whole from the spool, once.
			if whole, ok, err := s.finalBig.text(offsetIn(s.finalBig.skel, t.Raw)); ok {
				o.text = whole
				s.fail(err)
			}
		}
		if v, said, ok := s.structured(); ok {
			o.structured, o.text = v, said
		}
	}
	select { // the group is dead: only an escaped grandchild holds stderr
	case <-p.errDone:
	case <-time.After(child.WaitDelay):
	}
	humanInt, _ := p.interrupted()
	code, sig := child.Exit(p.cmd)
	o.err = s.outcome(humanInt, code, sig, p.stderr.String())
	return o
}
