package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// maxLine is the stream-json line cap: large tool results arrive as one line.
const maxLine = 64 << 20

// proc is one running claude: its own process group, stdin kept open for
// control requests until the first result.
type proc struct {
	cmd     *exec.Cmd
	mu      sync.Mutex
	stdin   *os.File // nil once closed
	reqs    int
	words   string
	sentInt bool
	intC    chan struct{} // an interrupt was sent (buffered 1)
	stderr  *tailBuffer
	exited  chan struct{}
	waitErr error
}

// newProc prepares claude in its own process group (tools it spawns are
// killed with it). The caller starts it with start.
func newProc(claude string, args, env []string, dir string) *proc {
	cmd := exec.Command(claude, args...)
	cmd.Env = env
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return &proc{cmd: cmd, stderr: &tailBuffer{max: 16 << 10}, exited: make(chan struct{}), intC: make(chan struct{}, 1)}
}

// start launches the process with pipes as plain files (so Wait never
// blocks on a grandchild holding stdout) and returns the stdout reader.
func (p *proc) start() (*os.File, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = inR, outW, errW
	err = p.cmd.Start()
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, err
	}
	p.stdin = inW
	go func() { io.Copy(p.stderr, errR); errR.Close() }()
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	return outR, nil
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

// interrupt sends the interrupt control request and remembers the words.
func (p *proc) interrupt(words string) error {
	p.mu.Lock()
	p.reqs++
	id := fmt.Sprintf("flower_int_%d", p.reqs)
	p.words = words
	p.sentInt = true
	p.mu.Unlock()
	err := p.send(map[string]any{"type": "control_request", "request_id": id, "request": map[string]any{"subtype": "interrupt"}})
	select {
	case p.intC <- struct{}{}:
	default:
	}
	return err
}

// interruptGrace is how long the CLI gets to end the turn after an
// interrupt before the group is stopped: an interrupt that reaches the CLI
// before its request is in flight is otherwise honoured only when the
// model's answer is complete.
const interruptGrace = 5 * time.Second

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

// signalGroup signals the whole process group.
func (p *proc) signalGroup(sig syscall.Signal) {
	if p.cmd.Process != nil {
		syscall.Kill(-p.cmd.Process.Pid, sig)
	}
}

// stop ends the process politely, then by force: SIGTERM to the group,
// up to grace for the exit, SIGKILL.
func (p *proc) stop(grace time.Duration) {
	p.closeInput()
	p.signalGroup(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		p.signalGroup(syscall.SIGKILL)
		<-p.exited
	}
}

// lineReader reads stdout lines into ch; it closes ch at EOF or error.
type lineMsg struct {
	line []byte
	err  error
}

func readLines(r io.Reader, ch chan<- lineMsg) {
	defer close(ch)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), maxLine)
	for sc.Scan() {
		ch <- lineMsg{line: append([]byte(nil), sc.Bytes()...)}
	}
	if err := sc.Err(); err != nil {
		ch <- lineMsg{err: err}
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
	err       error // nil for a success; see outcome.go
	cost      float64
	turns     int
	context   int
	sawInit   bool
}

// exitError describes how the process ended (once it has).
func (p *proc) exitError() *ExitError {
	e := &ExitError{Code: -1, Stderr: p.stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(p.waitErr, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			e.Signal = ws.Signal().String()
		} else {
			e.Code = ee.ExitCode()
		}
	case p.waitErr == nil:
		e.Code = 0
	default:
		e.Signal = p.waitErr.Error()
	}
	return e
}

// supervise reads the stream until the process is gone and returns the
// outcome. It owns the process: on every path the group is dead when it
// returns.
func (p *proc) supervise(ctx context.Context, out *os.File, s *stream, startTimeout time.Duration, onLine func(Event), onMirror func([]byte), onNear func(), onInit func(string)) attemptOut {
	lines := make(chan lineMsg, 64)
	go readLines(out, lines)
	defer func() {
		// Unblock and drain the reader so its goroutine ends.
		out.Close()
		go func() {
			for range lines {
			}
		}()
	}()
	startTimer := time.NewTimer(startTimeout)
	defer startTimer.Stop()
	var failure error
	var exitedC <-chan struct{} = p.exited
	var grace <-chan time.Time
	forced := false // stdout closed by us after the leader died
	var escalate <-chan time.Time
	resultsAtInt, stoppedForInt := 0, false
loop:
	for {
		select {
		case m, ok := <-lines:
			if !ok {
				break loop
			}
			if m.err != nil && forced {
				break loop
			}
			if m.err != nil {
				failure = fmt.Errorf("harness: read claude stdout: %w", m.err)
				p.stop(2 * time.Second)
				break loop
			}
			line := m.line
			if len(strings.TrimSpace(string(line))) == 0 {
				continue
			}
			if line[0] != '{' || !json.Valid(line) {
				if !s.sawInit {
					failure = &StartError{Reason: fmt.Sprintf("claude printed something that is not stream-json on stdout: %q", cut(string(line), 200))}
					p.stop(2 * time.Second)
					break loop
				}
				onLine(Event{Kind: "garbage", Data: map[string]any{"line": cut(string(line), 2000)}, Time: time.Now()})
				continue
			}
			wasInit := s.sawInit
			ev, emit, act := s.handle(line)
			if !wasInit && s.sawInit {
				startTimer.Stop()
				onInit(s.sessionID)
			}
			for _, mr := range s.mirror {
				onMirror(mr)
			}
			s.mirror = s.mirror[:0]
			if emit {
				onLine(ev)
			}
			if s.nearCrossed() {
				onNear()
			}
			switch act {
			case actEndInput:
				p.closeInput()
			case actInterrupt:
				p.mu.Lock()
				p.reqs++
				id := fmt.Sprintf("flower_handoff_%d", p.reqs)
				p.mu.Unlock()
				if p.send(map[string]any{"type": "control_request", "request_id": id, "request": map[string]any{"subtype": "interrupt"}}) != nil {
					p.stop(2 * time.Second)
				}
				resultsAtInt = s.results
				escalate = time.After(interruptGrace)
			}
		case <-p.intC:
			resultsAtInt = s.results
			escalate = time.After(interruptGrace)
		case <-escalate:
			escalate = nil
			if s.results == resultsAtInt {
				stoppedForInt = true
				p.stop(2 * time.Second)
			}
		case <-startTimer.C:
			select {
			case <-p.exited:
				// Dead already; a grandchild holds stdout. Report the death.
				p.signalGroup(syscall.SIGKILL)
				break loop
			default:
			}
			if !s.sawInit {
				failure = &StartError{Reason: fmt.Sprintf("no system/init from claude within %s", startTimeout)}
				p.stop(2 * time.Second)
				break loop
			}
		case <-ctx.Done():
			failure = fmt.Errorf("cancelled: %w", ctx.Err())
			p.stop(3 * time.Second)
			break loop
		case <-exitedC:
			// The leader is gone; a grandchild may still hold stdout. Give
			// the reader a moment to reach EOF, then kill the group.
			exitedC = nil
			grace = time.After(2 * time.Second)
		case <-grace:
			p.signalGroup(syscall.SIGKILL)
			forced = true
			out.Close()
			grace = nil
		}
	}
	p.closeInput()
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		p.signalGroup(syscall.SIGKILL)
		<-p.exited
	}
	// Tools the CLI started may outlive it in the group: reap them.
	p.signalGroup(syscall.SIGKILL)

	o := attemptOut{sessionID: s.sessionID, context: s.context, sawInit: s.sawInit}
	if s.results > 0 {
		o.text = s.final.Get("result").String()
		o.cost = s.final.Get("total_cost_usd").Float()
		o.turns = int(s.final.Get("num_turns").Int())
	}
	sentInt, _ := p.interrupted()
	switch {
	case failure != nil:
		o.err = failure
	case s.due:
		o.err = ErrHandoffDue
	case sentInt && (stoppedForInt || s.results > resultsAtInt && s.final.Get("is_error").Bool()):
		o.err = ErrInterrupted
	case s.results > 0:
		o.err = resultFailure(s.final)
	case !s.sawInit:
		o.err = &StartError{Reason: fmt.Sprintf("claude exited before system/init (%s)", p.exitError().how()), Stderr: p.stderr.String()}
	default:
		o.err = p.exitError()
	}
	return o
}
