package fleet

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flowerhq/flower/internal/child"
)

// Why a worker stops its own flows: the cause of their contexts.
var (
	errLeaseRanOut = errors.New("the worker's lease ran out before it could renew it (database unreachable?); the flow is stopped so that another worker may take it over")
	errLeaseLost   = errors.New("the worker's lease had expired when it renewed it; its flows may be another worker's now")
)

// holder is what a worker knows locally of its lease: the deadline by
// which it must have renewed it (the time it sent the last successful
// renewal plus the lease's length, never later than the expiry on the
// database's clock) and the flows it runs. When the deadline passes
// unrenewed it stops them at once, no database needed; the deadline file
// (child.DeadlineEnv) tells the flows' supervisors the same deadline, so
// their claude dies then even if this process is stopped.
type holder struct {
	ttl  time.Duration
	file string // "" when none
	logf func(string, ...any)
	down atomic.Bool // the database cannot be reached (keepLease says so)

	mu       sync.Mutex
	deadline time.Time
	timer    *time.Timer
	flows    map[int64]context.CancelCauseFunc
}

func newHolder(ttl time.Duration, file string, logf func(string, ...any)) *holder {
	h := &holder{ttl: ttl, file: file, logf: logf, flows: map[int64]context.CancelCauseFunc{}}
	h.timer = time.AfterFunc(time.Hour, h.expire)
	h.timer.Stop()
	return h
}

// renewed moves the deadline to sent + ttl: a renewal sent at sent
// succeeded.
func (h *holder) renewed(sent time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := sent.Add(h.ttl)
	if !d.After(h.deadline) {
		return
	}
	h.deadline = d
	if h.file != "" {
		if err := child.WriteDeadline(h.file, d); err != nil {
			h.logf("lease deadline file %s: %v", h.file, err)
		}
	}
	h.timer.Reset(time.Until(d))
}

// live reports whether the lease's local deadline is ahead.
func (h *holder) live() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return time.Now().Before(h.deadline)
}

// expire stops every flow when the deadline has passed.
func (h *holder) expire() {
	h.mu.Lock()
	late := !time.Now().Before(h.deadline)
	h.mu.Unlock()
	if late {
		h.stopAll(errLeaseRanOut)
	}
}

// stopAll stops every running flow with cause.
func (h *holder) stopAll(cause error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, cancel := range h.flows {
		cancel(cause)
	}
}

// run registers a flow: its context ends with the lease.
func (h *holder) run(ctx context.Context, job int64) (context.Context, func()) {
	fctx, cancel := context.WithCancelCause(ctx)
	h.mu.Lock()
	h.flows[job] = cancel
	h.mu.Unlock()
	return fctx, func() {
		h.mu.Lock()
		delete(h.flows, job)
		h.mu.Unlock()
		cancel(nil)
	}
}

// close stops the timer.
func (h *holder) close() { h.timer.Stop() }

// running lists the jobs whose flows run here.
func (h *holder) running() []int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	ids := make([]int64, 0, len(h.flows))
	for id := range h.flows {
		ids = append(ids, id)
	}
	return ids
}
