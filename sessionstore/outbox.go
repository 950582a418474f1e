package sessionstore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/flowerhq/flower/internal/atomicfile"
	"github.com/flowerhq/flower/internal/redact"
)

// OutboxOptions make a Store keep the writes it cannot make while its
// database is unreachable (SetOutbox): mirrored transcript lines, run
// records and documents are kept in order and tried again with backoff;
// Close keeps trying for Patience, then spools what is left to Dir, where
// ReplayOutbox makes them later.
type OutboxOptions struct {
	// Dir is where the writes still pending when Close gives up are spooled
	// (a private file each Close, 0600 in a 0700 folder); "" drops them.
	Dir string
	// Patience is how long Close keeps trying (default 20 s).
	Patience time.Duration
	// Label is kept with every spooled write: ReplayOutbox hands it back
	// to get the writer's fence (a queued flow's job and token).
	Label json.RawMessage
}

// defaultPatience is OutboxOptions.Patience's default.
const defaultPatience = 20 * time.Second

// outWrite is one write the outbox keeps, as it is spooled.
type outWrite struct {
	Kind  string          `json:"kind"` // mirror, run or documents
	Label json.RawMessage `json:"label,omitempty"`
	Frame json.RawMessage `json:"frame,omitempty"` // a transcript_mirror line
	Run   *RunRecord      `json:"run,omitempty"`
	Flow  string          `json:"flow,omitempty"`
	Docs  []Document      `json:"docs,omitempty"`
}

// outbox is a Store's pending writes and their retrier.
type outbox struct {
	o       OutboxOptions
	mu      sync.Mutex
	pending []outWrite
	running bool // a retrier runs
	kept    int  // writes kept since the store was last reachable
	stop    chan struct{}
	wg      sync.WaitGroup // the retrier
}

// SetOutbox makes s keep the writes it cannot make now (see
// OutboxOptions) instead of failing them: a kept write returns nil. A
// write its fence refuses (ErrFenced) or that is invalid still fails.
// Call it before the first write.
func (s *Store) SetOutbox(o OutboxOptions) {
	if o.Patience <= 0 {
		o.Patience = defaultPatience
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.box = &outbox{o: o, stop: make(chan struct{})}
}

func (s *Store) outbox() *outbox {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.box
}

// invalidError is a write no retry can make (a bad entry).
type invalidError struct{ msg string }

func (e *invalidError) Error() string { return e.msg }

// retryable reports whether err may pass once the database is back: not
// a fence's refusal, not an invalid write, not an error the server gave
// for the statement itself (only its connection, shutdown and resource
// classes: 08, 57, 53).
func retryable(err error) bool {
	var inv *invalidError
	var pe *pgconn.PgError
	switch {
	case err == nil, errors.Is(err, ErrFenced), errors.Is(err, ErrBadKey), errors.Is(err, ErrNotMirror), errors.As(err, &inv):
		return false
	case errors.As(err, &pe):
		return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57") || strings.HasPrefix(pe.Code, "53")
	}
	return true
}

// apply makes one write now.
func (s *Store) apply(ctx context.Context, w outWrite) error {
	switch w.Kind {
	case "mirror":
		return s.mirrorNow(ctx, w.Frame)
	case "run":
		return s.putRun(ctx, *w.Run)
	case "documents":
		return s.putDocuments(ctx, w.Flow, w.Docs)
	}
	return &invalidError{fmt.Sprintf("sessionstore: outbox: unknown write %q", w.Kind)}
}

// deliver makes w now, or keeps it when the store has an outbox and the
// database cannot be reached (or earlier writes wait: order is kept).
func (s *Store) deliver(ctx context.Context, w outWrite) error {
	b := s.outbox()
	if b == nil {
		return s.apply(ctx, w)
	}
	b.mu.Lock()
	waiting := len(b.pending) > 0
	b.mu.Unlock()
	var err error
	if !waiting {
		if err = s.apply(ctx, w); !retryable(err) {
			return err
		}
	}
	// A copy (the caller's line may change), with no secret in it: a
	// kept write may be spooled to a file.
	w.Frame, w.Label = redact.Process().Bytes(bytes.Clone(w.Frame)), b.o.Label
	b.mu.Lock()
	b.pending = append(b.pending, w)
	b.kept++
	start := !b.running
	b.running = true
	b.mu.Unlock()
	if start {
		s.logf("the session store cannot be reached (%v): its writes are kept and tried again", err)
		b.wg.Add(1)
		go s.retry(b)
	}
	return nil
}

// retry makes the pending writes, with backoff, until none is left or
// the store closes.
func (s *Store) retry(b *outbox) {
	defer b.wg.Done()
	for wait := 200 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		if s.flush(b) {
			return
		}
		select {
		case <-b.stop:
			return
		case <-time.After(wait):
		}
	}
}

// flush makes the pending writes in order; it reports whether none is
// left (the retrier then ends). A write refused for good is dropped and
// said.
func (s *Store) flush(b *outbox) bool {
	for {
		select {
		case <-b.stop:
			return false
		default:
		}
		b.mu.Lock()
		if len(b.pending) == 0 {
			n := b.kept
			b.running, b.kept = false, 0
			b.mu.Unlock()
			s.logf("the session store is back: %d kept writes made", n)
			return true
		}
		w := b.pending[0]
		b.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := s.apply(ctx, w)
		cancel()
		if retryable(err) {
			return false
		}
		if err != nil {
			s.logf("a kept write is refused, dropped: %v", err)
		}
		b.mu.Lock()
		b.pending = b.pending[1:]
		b.mu.Unlock()
	}
}

// drain is Close's part: it waits up to Patience for the pending writes,
// then stops the retrier and spools what is left.
func (s *Store) drain(b *outbox) {
	end := time.Now().Add(b.o.Patience)
	for {
		b.mu.Lock()
		n, running := len(b.pending), b.running
		b.mu.Unlock()
		if n == 0 && !running || time.Now().After(end) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	close(b.stop)
	b.wg.Wait()
	b.mu.Lock()
	left := b.pending
	b.pending = nil
	b.mu.Unlock()
	if len(left) == 0 {
		return
	}
	if b.o.Dir == "" {
		s.logf("the session store is still unreachable: %d writes are lost (no spool folder)", len(left))
		return
	}
	p, err := spoolWrites(b.o.Dir, left)
	if err != nil {
		s.logf("the session store is still unreachable, and spooling its %d writes failed: %v", len(left), err)
		return
	}
	s.logf("the session store is still unreachable: %d writes spooled to %s, made when a worker starts or reconnects there", len(left), p)
}

// spoolWrites writes ws, one JSON line each, to a new private file in dir.
func spoolWrites(dir string, ws []outWrite) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	var buf bytes.Buffer
	for _, w := range ws {
		b, err := json.Marshal(w)
		if err != nil {
			return "", err
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	p := filepath.Join(dir, fmt.Sprintf("outbox-%d-%d.jsonl", time.Now().UnixNano(), os.Getpid()))
	return p, atomicfile.Write(p, buf.Bytes(), 0o600)
}

// ReplayOutbox makes the writes spooled in dir (by stores whose Close gave
// up), each under the fence fenceOf gives for its label (fenceOf nil, or
// returning nil: none). A write its fence refuses, or that is invalid, is
// dropped and counted in refused. A file whose writes are all made or
// dropped is removed; at the first write that still fails, the file keeps
// the rest and err says why.
func (s *Store) ReplayOutbox(ctx context.Context, dir string, fenceOf func(label json.RawMessage) FenceFunc) (made, refused int, err error) {
	files, _ := filepath.Glob(filepath.Join(dir, "outbox-*.jsonl"))
	s.mu.Lock()
	own := s.fence
	s.mu.Unlock()
	defer s.SetFence(own)
	for _, f := range files {
		ws, rerr := readWrites(f)
		if rerr != nil {
			s.logf("outbox %s: %v (left as it is)", f, rerr)
			continue
		}
		for i, w := range ws {
			var fence FenceFunc
			if fenceOf != nil {
				fence = fenceOf(w.Label)
			}
			s.SetFence(fence)
			switch aerr := s.apply(ctx, w); {
			case aerr == nil:
				made++
			case !retryable(aerr):
				refused++
			default:
				if werr := rewrite(f, ws[i:]); werr != nil {
					s.logf("outbox %s: %v", f, werr)
				}
				return made, refused, aerr
			}
		}
		os.Remove(f)
	}
	return made, refused, nil
}

func readWrites(path string) ([]outWrite, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ws []outWrite
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 2*maxLine)
	for sc.Scan() {
		var w outWrite
		if err := json.Unmarshal(sc.Bytes(), &w); err != nil {
			return nil, err
		}
		ws = append(ws, w)
	}
	return ws, sc.Err()
}

func rewrite(path string, ws []outWrite) error {
	var buf bytes.Buffer
	for _, w := range ws {
		b, err := json.Marshal(w)
		if err != nil {
			return err
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return atomicfile.Write(path, buf.Bytes(), 0o600)
}
