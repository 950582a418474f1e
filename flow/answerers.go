package flow

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// FileAnswers answers from a file or stream of pre-recorded answers, one per
// line, consumed in order ("answered from a file" in pipelines). Used up,
// nobody answers.
type FileAnswers struct {
	mu      sync.Mutex
	answers []string
}

// NewFileAnswers reads answers from r (blank lines are skipped).
func NewFileAnswers(r io.Reader) (*FileAnswers, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("flow: answers: %w", err)
	}
	fa := &FileAnswers{}
	for _, l := range strings.Split(string(b), "\n") {
		if t := strings.TrimSpace(l); t != "" {
			fa.answers = append(fa.answers, t)
		}
	}
	return fa, nil
}

// LoadFileAnswers reads answers from path.
func LoadFileAnswers(path string) (*FileAnswers, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("flow: answers: %w", err)
	}
	defer f.Close()
	return NewFileAnswers(f)
}

// Instant: recorded answers never make anyone wait.
func (f *FileAnswers) Instant() bool { return true }

// Answer implements Answerer.
func (f *FileAnswers) Answer(ctx context.Context, q Question) (string, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.answers) == 0 {
		return "", false, nil
	}
	a := f.answers[0]
	f.answers = f.answers[1:]
	return a, true, nil
}

// TerminalAnswers asks on a terminal: the question and options go to Out,
// one line comes from Lines (the terminal's one reader, shared with the
// interrupt prompt; nil: a reader of In of its own). A number picks that
// option.
type TerminalAnswers struct {
	In    io.Reader
	Out   io.Writer
	Lines *Lines

	once sync.Once
}

// Answer implements Answerer.
func (t *TerminalAnswers) Answer(ctx context.Context, q Question) (string, bool, error) {
	t.once.Do(func() {
		if t.Lines == nil {
			t.Lines = NewLines(t.In)
		}
	})
	fmt.Fprintf(t.Out, "\n[flower] %s\n", strings.TrimSpace(q.Text))
	for i, o := range q.Options {
		fmt.Fprintf(t.Out, "  %d. %s\n", i+1, o)
	}
	fmt.Fprint(t.Out, "> ")
	l, ok, err := t.Lines.ReadLine(ctx)
	if err != nil || !ok {
		return "", false, err
	}
	return pickOption(l, q.Options), true, nil
}

// pickOption maps an answer "2" to the second option's text; anything else
// is returned as typed.
func pickOption(text string, options []string) string {
	t := strings.TrimSpace(text)
	for i, o := range options {
		if t == fmt.Sprint(i+1) {
			return o
		}
	}
	return t
}
