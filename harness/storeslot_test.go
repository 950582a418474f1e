package harness

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/flowerhq/flower/internal/redact"
)

// slotStore is a SessionStore that records what the slot does with it.
type slotStore struct {
	mu          sync.Mutex
	lines       []string
	checkpoints int
	closes      int
	ctxErr      error // the context error of the last checkpoint
}

func (s *slotStore) Mirror(_ context.Context, line []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines = append(s.lines, string(line))
	return nil
}

func (s *slotStore) Materialize(context.Context, string, string, string) error { return nil }

func (s *slotStore) Checkpoint(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checkpoints++
	s.ctxErr = ctx.Err()
	return nil
}

func (s *slotStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closes++
	return nil
}

// slotFor is the slot newStoreSlot gives a Runtime whose OpenStore counts
// its opens and hands out st (or fails with err); red redacts its lines.
func slotFor(t *testing.T, st SessionStore, err error, opens *atomic.Int32, red *redact.Redactor) *storeSlot {
	dir := t.TempDir()
	r := &Runtime{workspace: dir, runDir: dir, red: red, opts: Options{
		OpenStore: func(ctx context.Context, path string, o StoreOptions) (SessionStore, error) {
			opens.Add(1)
			if ctx.Err() != nil {
				return nil, errors.New("the open got a cancelled context")
			}
			if !strings.HasSuffix(path, "sessions.db") || o.Workspace != dir {
				return nil, errors.New("wrong path or workspace: " + path)
			}
			return st, err
		}}}
	return newStoreSlot(r)
}

// TestStoreSlot_LazyOnceAndIdempotentClose: the store opens at the first
// get, once however many steps ask at the same time, with the caller's
// context values but not its cancellation; a checkpoint before any open
// opens nothing and settles nothing, after it reaches the store even from a
// cancelled step; Close closes the store once however often it is called.
// Controls: a Runtime without OpenStore (or with NoStore) has no slot, and
// its checkpoint and close do nothing.
func TestStoreSlot_LazyOnceAndIdempotentClose(t *testing.T) {
	st := &slotStore{}
	var opens atomic.Int32
	s := slotFor(t, st, nil, &opens, redact.FromEnv(nil))
	s.checkpoint(t.Context())
	if opens.Load() != 0 || st.checkpoints != 0 {
		t.Fatalf("before any step: %d opens, %d checkpoints; want none", opens.Load(), st.checkpoints)
	}
	if err := s.close(); err != nil || st.closes != 0 || opens.Load() != 0 {
		t.Fatalf("close before any open: %v, %d closes, %d opens; want nothing done", err, st.closes, opens.Load())
	}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got, err := s.get(cancelled); err != nil || got == nil {
				t.Errorf("get: %v, %v", got, err)
			}
		}()
	}
	wg.Wait()
	if opens.Load() != 1 {
		t.Fatalf("%d opens for 8 steps; want 1", opens.Load())
	}
	s.checkpoint(cancelled)
	if st.checkpoints != 1 || st.ctxErr != nil {
		t.Fatalf("checkpoint from a cancelled step: %d checkpoints, ctx error %v; want one, not cancelled", st.checkpoints, st.ctxErr)
	}
	for range 2 {
		if err := s.close(); err != nil {
			t.Fatal(err)
		}
	}
	if st.closes != 1 {
		t.Fatalf("%d closes; want 1", st.closes)
	}
	for _, o := range []Options{{}, {NoStore: true, OpenStore: func(context.Context, string, StoreOptions) (SessionStore, error) { return st, nil }}} {
		if s := newStoreSlot(&Runtime{opts: o}); s != nil {
			t.Fatalf("options %+v gave a store slot", o)
		}
	}
	var none *storeSlot
	none.checkpoint(t.Context())
	if err := none.close(); err != nil {
		t.Fatal(err)
	}
}

// TestStoreSlot_FailedOpenFailsEveryStep: a store that cannot open is
// opened once, every step gets its error (naming the session store), and
// Close has nothing to close. Control: the store is redacted once it opens
// (a mirrored secret arrives replaced).
func TestStoreSlot_FailedOpenFailsEveryStep(t *testing.T) {
	var opens atomic.Int32
	s := slotFor(t, nil, errors.New("disk on fire"), &opens, redact.FromEnv(nil))
	for range 3 {
		if _, err := s.get(t.Context()); err == nil || !strings.Contains(err.Error(), "session store: disk on fire") {
			t.Fatalf("get: %v; want the open's error", err)
		}
	}
	if opens.Load() != 1 {
		t.Fatalf("%d opens; want 1", opens.Load())
	}
	s.checkpoint(t.Context())
	if err := s.close(); err != nil {
		t.Fatalf("close after a failed open: %v", err)
	}

	st := &slotStore{}
	const secret = "sk-ant-slot-secret-0123456789"
	ok := slotFor(t, st, nil, &opens, redact.FromEnv([]string{"ANTHROPIC_API_KEY=" + secret}))
	got, err := ok.get(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := got.Mirror(t.Context(), []byte(`{"text":"`+secret+`"}`)); err != nil {
		t.Fatal(err)
	}
	if len(st.lines) != 1 || strings.Contains(st.lines[0], secret) {
		t.Fatalf("the store got %q; want the secret redacted", st.lines)
	}
	ok.checkpoint(t.Context())
	if st.checkpoints != 1 {
		t.Fatalf("%d checkpoints through the redacted store; want 1", st.checkpoints)
	}
}
