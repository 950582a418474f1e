package flow

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/flowerhq/flower/testkit/testbed"
)

// One reader hands each line to whoever asked; the newest asker first; a
// cancelled asker takes nothing; EOF ends everyone.
func TestLines(t *testing.T) {
	pr, pw := io.Pipe()
	l := NewLines(pr)
	type got struct {
		line string
		ok   bool
	}
	ask := func(ctx context.Context) chan got {
		ch := make(chan got, 1)
		go func() { s, ok, _ := l.ReadLine(ctx); ch <- got{s, ok} }()
		return ch
	}
	// state awaits the reader's state: n askers waiting, p lines kept.
	state := func(n, p int) {
		t.Helper()
		testbed.Await(t, fmt.Sprintf("%d askers waiting, %d lines kept", n, p), func() bool {
			l.mu.Lock()
			defer l.mu.Unlock()
			return len(l.waiters) == n && len(l.pending) == p
		})
	}
	// A question is waiting; then the interrupt prompt asks: the prompt (the
	// newest asker) gets the next line, the question the one after.
	question := ask(t.Context())
	state(1, 0)
	prompt := ask(t.Context())
	state(2, 0)
	pw.Write([]byte("WORDS\n"))
	if g := <-prompt; g.line != "WORDS" || !g.ok {
		t.Fatalf("prompt got %+v", g)
	}
	pw.Write([]byte("ANSWER\n"))
	if g := <-question; g.line != "ANSWER" {
		t.Fatalf("question got %+v", g)
	}
	// A cancelled asker leaves the next line for the next asker.
	ctx, cancel := context.WithCancel(t.Context())
	gone := ask(ctx)
	state(1, 0)
	cancel()
	if g := <-gone; g.ok {
		t.Fatalf("cancelled asker got %+v", g)
	}
	pw.Write([]byte("NEXT\n"))
	state(0, 1) // typed while nobody asks: kept
	if g := <-ask(t.Context()); g.line != "NEXT" {
		t.Fatalf("next asker got %+v", g)
	}
	// An empty line is a line (the interrupt prompt's "no words").
	pw.Write([]byte("\n"))
	if g := <-ask(t.Context()); g.line != "" || !g.ok {
		t.Fatalf("empty line: %+v", g)
	}
	pw.Close()
	if g := <-ask(t.Context()); g.ok {
		t.Fatalf("after EOF: %+v", g)
	}
}
