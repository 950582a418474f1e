package harness

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// freePort returns a loopback address nobody listens on (yet).
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// WaitOnline with no timeout waits for the API to come back, however long,
// telling offline about each failed probe with the next probe's time.
func TestWaitOnlineWaitsUntilBack(t *testing.T) {
	addr := freePort(t)
	var mu sync.Mutex
	var nexts []time.Time
	var ln net.Listener
	offline := func(err error, next time.Time) {
		mu.Lock()
		defer mu.Unlock()
		if !next.After(time.Now().Add(-time.Second)) || err == nil {
			t.Errorf("offline(%v, %v): want an error and a coming probe", err, next)
		}
		nexts = append(nexts, next)
		if len(nexts) == 3 { // the network comes back after three failed probes
			var lerr error
			if ln, lerr = net.Listen("tcp", addr); lerr != nil {
				t.Error(lerr)
			}
		}
	}
	if err := (Resilience{}).WaitOnline(t.Context(), "http://"+addr, offline); err != nil {
		t.Fatalf("WaitOnline: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if ln == nil || len(nexts) != 3 {
		t.Fatalf("returned after %d failed probes, want 3 (then online)", len(nexts))
	}
	ln.Close()
	for i := 1; i < len(nexts); i++ {
		if !nexts[i].After(nexts[i-1]) {
			t.Errorf("next probe times do not advance: %v", nexts)
		}
	}
}

// OnlineTimeout bounds the wait with an error that names it; a reachable
// host returns at once with no offline call (the control).
func TestWaitOnlineTimeout(t *testing.T) {
	calls := 0
	count := func(error, time.Time) { calls++ }
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	r := Resilience{OnlineTimeout: 500 * time.Millisecond}
	if err := r.WaitOnline(t.Context(), "http://"+ln.Addr().String(), count); err != nil || calls != 0 {
		t.Fatalf("reachable: err %v, %d offline calls", err, calls)
	}
	err = r.WaitOnline(t.Context(), "http://"+freePort(t), count)
	if err == nil || !strings.Contains(err.Error(), "online timeout") || calls == 0 {
		t.Fatalf("unreachable: err %v, %d offline calls", err, calls)
	}
}

// The context ends a wait that has no timeout.
func TestWaitOnlineContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	err := (Resilience{}).WaitOnline(ctx, "http://"+freePort(t), func(error, time.Time) { cancel() })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

func TestAPIHost(t *testing.T) {
	for in, want := range map[string]string{"": "api.anthropic.com:443", "http://127.0.0.1:9": "127.0.0.1:9",
		"http://proxy": "proxy:80", "https://gw.example/v1": "gw.example:443"} {
		if got := apiHost(in); got != want {
			t.Errorf("apiHost(%q) = %q, want %q", in, got, want)
		}
	}
}
