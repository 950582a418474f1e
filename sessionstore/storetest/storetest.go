// Package storetest is the conformance suite of the SessionStore protocol:
// the 14 behavioural contracts the official Agent SDK states for every
// session store backend (reference/session-store-contracts.md), written
// against the Go method set of sessionstore.Store.
//
// Lifecycle: a backend's test calls Run(t, open); open returns a fresh,
// empty store for each contract (and registers its cleanup on t). Every
// contract runs as its own subtest named after it.
package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/flowerhq/flower/sessionstore"
)

// Store is the method set the contracts exercise.
type Store interface {
	Append(ctx context.Context, key sessionstore.Key, entries []json.RawMessage) error
	Load(ctx context.Context, key sessionstore.Key) ([]json.RawMessage, error)
	ListSessions(ctx context.Context, projectKey string) ([]sessionstore.SessionInfo, error)
	ListSessionSummaries(ctx context.Context, projectKey string) ([]sessionstore.Summary, error)
	Delete(ctx context.Context, key sessionstore.Key) error
	ListSubkeys(ctx context.Context, key sessionstore.Key) ([]string, error)
}

// Run runs every contract against stores made by open.
func Run(t *testing.T, open func(t *testing.T) Store) {
	for _, c := range contracts {
		t.Run(c.name, func(t *testing.T) {
			h := &harness{t: t, s: open(t), ctx: t.Context()}
			c.run(h)
		})
	}
}

var (
	main1 = sessionstore.Key{ProjectKey: "proj-a", SessionID: "sess-1"}
	main2 = sessionstore.Key{ProjectKey: "proj-a", SessionID: "sess-2"}
	other = sessionstore.Key{ProjectKey: "proj-b", SessionID: "sess-1"} // same id, other project
	sub1  = sessionstore.Key{ProjectKey: "proj-a", SessionID: "sess-1", Subpath: "subagents/agent-a1"}
	sub2  = sessionstore.Key{ProjectKey: "proj-a", SessionID: "sess-1", Subpath: "subagents/agent-a2"}
	subX  = sessionstore.Key{ProjectKey: "proj-a", SessionID: "sess-2", Subpath: "subagents/agent-x"}
)

// entries makes n distinct entries tagged with tag. Their uuids run
// backwards, so an order by uuid differs from the order of appending.
func entries(tag string, n int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range n {
		out[i] = json.RawMessage(fmt.Sprintf(
			`{"type":"user","uuid":"%s-%03d","message":{"role":"user","content":"%s #%d \"q\" ü"},"n":%d}`,
			tag, n-i, tag, i, i))
	}
	return out
}

type harness struct {
	t   *testing.T
	s   Store
	ctx context.Context
}

func (h *harness) append(k sessionstore.Key, e []json.RawMessage) {
	h.t.Helper()
	if err := h.s.Append(h.ctx, k, e); err != nil {
		h.t.Fatalf("Append(%v): %v", k, err)
	}
}

// must is v, or the test stops naming the call that failed.
func must[T any](h *harness, call string, arg any, v T, err error) T {
	h.t.Helper()
	if err != nil {
		h.t.Fatalf("%s(%v): %v", call, arg, err)
	}
	return v
}

func (h *harness) load(k sessionstore.Key) []json.RawMessage {
	h.t.Helper()
	got, err := h.s.Load(h.ctx, k)
	return must(h, "Load", k, got, err)
}

// wantEntries checks deep equality (not byte equality) and order.
func (h *harness) wantEntries(k sessionstore.Key, want []json.RawMessage) {
	h.t.Helper()
	got := h.load(k)
	if want == nil {
		if got != nil {
			h.t.Fatalf("Load(%v) = %d entries, want none", k, len(got))
		}
		return
	}
	if len(got) != len(want) {
		h.t.Fatalf("Load(%v) = %d entries, want %d", k, len(got), len(want))
	}
	for i := range want {
		var g, w any
		if err := json.Unmarshal(got[i], &g); err != nil {
			h.t.Fatalf("Load(%v)[%d]: %v", k, i, err)
		}
		json.Unmarshal(want[i], &w)
		if !reflect.DeepEqual(g, w) {
			h.t.Fatalf("Load(%v)[%d] = %s, want %s", k, i, got[i], want[i])
		}
	}
}

// keptApart appends different entries under a and b and loads each back
// unmixed.
func (h *harness) keptApart(a, b sessionstore.Key) {
	h.t.Helper()
	ea, eb := entries("a", 3), entries("b", 2)
	h.append(a, ea)
	h.append(b, eb)
	h.wantEntries(a, ea)
	h.wantEntries(b, eb)
}

func (h *harness) sessions(pk string) []sessionstore.SessionInfo {
	h.t.Helper()
	got, err := h.s.ListSessions(h.ctx, pk)
	return must(h, "ListSessions", pk, got, err)
}

func (h *harness) sessionIDs(pk string) []string {
	h.t.Helper()
	var ids []string
	for _, s := range h.sessions(pk) {
		ids = append(ids, s.SessionID)
	}
	slices.Sort(ids)
	return ids
}

func (h *harness) subkeys(k sessionstore.Key) []string {
	h.t.Helper()
	got, err := h.s.ListSubkeys(h.ctx, k)
	got = must(h, "ListSubkeys", k, got, err)
	slices.Sort(got)
	return got
}

func (h *harness) summaries(pk string) []sessionstore.Summary {
	h.t.Helper()
	got, err := h.s.ListSessionSummaries(h.ctx, pk)
	return must(h, "ListSessionSummaries", pk, got, err)
}

func (h *harness) delete(k sessionstore.Key) {
	h.t.Helper()
	if err := h.s.Delete(h.ctx, k); err != nil {
		h.t.Fatalf("Delete(%v): %v", k, err)
	}
}

func (h *harness) wantStrings(what string, got, want []string) {
	h.t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !slices.Equal(got, want) {
		h.t.Fatalf("%s = %q, want %q", what, got, want)
	}
}
