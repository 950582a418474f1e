package testbed

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a testing.TB that keeps its cleanups and errors, so a test
// can run a child's cleanup when it chooses.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	cleanups []func()
	errs     []string
}

func (r *recorder) Helper() {}

func (r *recorder) Cleanup(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = append(r.cleanups, f)
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, format)
}

func (r *recorder) cleanup() []string {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	return r.errs
}

// expiring is a context whose deadline passes when the test says so.
type expiring struct {
	context.Context
	once sync.Once
	done chan struct{}
}

func newExpiring() *expiring {
	return &expiring{Context: context.Background(), done: make(chan struct{})}
}

func (c *expiring) expire()                     { c.once.Do(func() { close(c.done) }) }
func (c *expiring) Done() <-chan struct{}       { return c.done }
func (c *expiring) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *expiring) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// TestCommandDeadlineAfterItEnded: a child that ended before its deadline
// passed is no failure, though the deadline has passed when the cleanup
// runs (a parent test's cleanup after its parallel subtests: the false
// "cp ran into the test's deadline" of TestE2E_MarketplaceInstall). The
// control: a child still running at its deadline is killed and reported.
func TestCommandDeadlineAfterItEnded(t *testing.T) {
	rec, ctx := &recorder{TB: t}, newExpiring()
	if err := command(rec, ctx, "true").Run(); err != nil {
		t.Fatal(err)
	}
	ctx.expire()
	if errs := rec.cleanup(); len(errs) != 0 {
		t.Errorf("a child that ended in time was reported: %v", errs)
	}

	rec, ctx = &recorder{TB: t}, newExpiring()
	cmd := command(rec, ctx, "sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctx.expire()
	cmd.Wait()
	if errs := rec.cleanup(); len(errs) != 1 || !strings.Contains(errs[0], "ran into the test's deadline") {
		t.Errorf("control: a child killed at its deadline was reported as %v", errs)
	}
}

func TestParseStatCPU(t *testing.T) {
	for _, c := range []struct {
		line string
		want time.Duration
		ok   bool
	}{
		{"42 (flower) S 1 42 42 0 -1 4194560 100 0 0 0 7 3 20 10 20 0 8 0 100 1000 200", 400 * time.Millisecond, true},
		{"42 (a) b (c)) R 1 42 42 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 1 1 1", 20 * time.Millisecond, true},
		{"42 (short) S 1 2 3", 0, false},
		{"no parenthesis", 0, false},
		{"42 (x) S 1 42 42 0 -1 0 0 0 0 0 x 1 0 0 20", 0, false},
	} {
		got, ok := parseStatCPU(c.line)
		if got != c.want || ok != c.ok {
			t.Errorf("parseStatCPU(%q) = %s, %v; want %s, %v", c.line, got, ok, c.want, c.ok)
		}
	}
}

func TestTreeCPUCountsSelf(t *testing.T) {
	end := time.Now().Add(30 * time.Millisecond)
	for time.Now().Before(end) { // spend some CPU
	}
	if d := TreeCPU(os.Getpid()); d <= 0 {
		t.Fatalf("TreeCPU(self) = %s after a busy loop", d)
	}
	if d := TreeCPU(-1); d != 0 {
		t.Fatalf("control: TreeCPU(-1) = %s, want 0", d)
	}
}
