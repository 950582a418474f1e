package flow

import (
	"bufio"
	"context"
	"io"
	"sync"
)

// Lines is the one reader of a terminal: a single goroutine reads lines
// from In and hands each to whoever asked for it — the channel's questions
// (TerminalAnswers) and the interrupt prompt share it, so no second reader
// can take the person's words. The newest asker gets the next line (what
// the screen asks last is what the person answers); a line typed while
// nobody asks waits for the next asker. Build it with NewLines.
type Lines struct {
	in io.Reader

	once    sync.Once
	mu      sync.Mutex
	waiters []chan string // newest last
	pending []string      // lines nobody has asked for yet
	eof     bool
}

// NewLines returns the reader of in; its goroutine starts at the first
// ReadLine and ends with in.
func NewLines(in io.Reader) *Lines { return &Lines{in: in} }

func (l *Lines) start() {
	go func() {
		sc := bufio.NewScanner(l.in)
		for sc.Scan() {
			l.deliver(sc.Text())
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		l.eof = true
		for _, w := range l.waiters {
			close(w)
		}
		l.waiters = nil
	}()
}

func (l *Lines) deliver(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.waiters); n > 0 {
		w := l.waiters[n-1]
		l.waiters = l.waiters[:n-1]
		w <- s // buffered: never blocks
		return
	}
	l.pending = append(l.pending, s)
}

// ReadLine waits for the next line for this caller. ok false: the input
// ended. A cancelled ctx returns its error; a line that arrived meanwhile
// is kept for the next asker.
func (l *Lines) ReadLine(ctx context.Context) (line string, ok bool, err error) {
	l.once.Do(l.start)
	l.mu.Lock()
	if len(l.pending) > 0 {
		line, l.pending = l.pending[0], l.pending[1:]
		l.mu.Unlock()
		return line, true, nil
	}
	if l.eof {
		l.mu.Unlock()
		return "", false, nil
	}
	w := make(chan string, 1)
	l.waiters = append(l.waiters, w)
	l.mu.Unlock()
	select {
	case line, ok := <-w:
		return line, ok, nil
	case <-ctx.Done():
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, x := range l.waiters {
		if x == w {
			l.waiters = append(l.waiters[:i], l.waiters[i+1:]...)
			break
		}
	}
	select {
	case line, ok := <-w: // delivered just before we left
		if ok {
			l.pending = append([]string{line}, l.pending...)
		}
	default:
	}
	return "", false, ctx.Err()
}
