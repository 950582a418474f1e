package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/flowerhq/flower/hooks"
)

// ErrGuardsNotLive starts the error of a step whose guards never reported.
const ErrGuardsNotLive = "guards not live"

// liveWait is one attempt's wait for its live report.
type liveWait struct {
	token string
	ch    chan struct{}
}

// expectLive registers a fresh token; the child gets it as
// hooks.LiveTokenEnv and its SessionStart hook echoes it.
func (r *Runtime) expectLive() liveWait {
	var b [16]byte
	_, _ = rand.Read(b[:])
	w := liveWait{token: hex.EncodeToString(b[:]), ch: make(chan struct{})}
	r.mu.Lock()
	if r.live == nil {
		r.live = map[string]chan struct{}{}
	}
	r.live[w.token] = w.ch
	r.mu.Unlock()
	return w
}

// forget drops the token once the attempt no longer waits.
func (r *Runtime) forget(w liveWait) {
	r.mu.Lock()
	delete(r.live, w.token)
	r.mu.Unlock()
}

// markLive is onReport's part: a guards_live report with a known token
// ends that attempt's wait.
func (r *Runtime) markLive(ev Event) {
	if ev.Kind != hooks.EventGuardsLive {
		return
	}
	tok, _ := ev.Data["token"].(string)
	r.mu.Lock()
	ch, ok := r.live[tok]
	delete(r.live, tok)
	r.mu.Unlock()
	if ok {
		close(ch)
	}
}

// awaitLive waits, before the prompt is sent, for the attempt's guards to
// report in. A claude that ends first is left to the supervisor (its exit
// is the failure); no report within the bound is ErrGuardsNotLive: the step
// never runs unguarded.
func (r *Runtime) awaitLive(ctx context.Context, w liveWait, p *proc) error {
	defer r.forget(w)
	// claude runs SessionStart hooks before it reads its first input, so
	// the bound only has to cover its start: on a loaded machine that is
	// what StartTimeout (60 s by default) already allows for system/init.
	bound := r.opts.GuardsLiveTimeout
	if bound <= 0 {
		bound = r.opts.StartTimeout
	}
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-w.ch:
		return nil
	case <-p.exited:
		return nil
	case <-ctx.Done():
		return nil
	case <-t.C:
		return fmt.Errorf("%s: flower-hook did not report from the step's SessionStart hook within %s "+
			"(settings flower cannot see may switch its hooks off, e.g. managed settings with allowManagedHooksOnly or disableAllHooks); "+
			"the step was stopped before its prompt was sent", ErrGuardsNotLive, bound)
	}
}
