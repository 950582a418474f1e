package storetest

import (
	"encoding/json"
	"slices"

	"github.com/flowerhq/flower/sessionstore"
)

var contracts = []struct {
	name string
	run  func(h *harness)
}{
	{"01_append_then_load_same_entries_in_append_order", func(h *harness) {
		e := entries("a", 5)
		h.append(main1, e)
		h.wantEntries(main1, e)
	}},
	{"02_unknown_session_or_subpath_loads_none", func(h *harness) {
		h.wantEntries(main1, nil)
		h.append(main1, entries("a", 1))
		h.wantEntries(sub1, nil)
		h.wantEntries(sessionstore.Key{ProjectKey: "proj-a", SessionID: "nope"}, nil)
	}},
	{"03_several_appends_load_in_call_order", func(h *harness) {
		a, b, c := entries("a", 2), entries("b", 3), entries("c", 1)
		h.append(main1, a)
		h.append(main1, b)
		h.append(main1, c)
		h.wantEntries(main1, slices.Concat(a, b, c))
	}},
	{"04_empty_append_changes_nothing", func(h *harness) {
		h.append(main1, nil)
		h.append(main1, []json.RawMessage{})
		h.wantEntries(main1, nil)
		h.wantStrings("ListSessions", h.sessionIDs("proj-a"), nil)
		e := entries("a", 2)
		h.append(main1, e)
		before := h.sessions("proj-a")
		h.append(main1, nil)
		h.wantEntries(main1, e)
		if after := h.sessions("proj-a"); !slices.Equal(before, after) {
			h.t.Fatalf("an empty append changed ListSessions: %v → %v", before, after)
		}
	}},
	{"05_subpath_stored_apart_from_main", func(h *harness) { h.keptApart(main1, sub1) }},
	{"06_project_keys_isolate", func(h *harness) { h.keptApart(main1, other) }},
	{"07_list_sessions_of_project_mtime_epoch_ms", func(h *harness) {
		h.append(main1, entries("a", 1))
		h.append(main2, entries("b", 1))
		h.append(other, entries("c", 1))
		h.wantStrings("ListSessions(proj-a)", h.sessionIDs("proj-a"), []string{"sess-1", "sess-2"})
		h.wantStrings("ListSessions(proj-b)", h.sessionIDs("proj-b"), []string{"sess-1"})
		for _, s := range h.sessions("proj-a") {
			if s.MTime <= 1e12 {
				h.t.Fatalf("mtime %d of %s is not epoch milliseconds", s.MTime, s.SessionID)
			}
		}
		if got := h.sessions("proj-unknown"); len(got) != 0 {
			h.t.Fatalf("ListSessions(unknown) = %v, want empty", got)
		}
		// The storage clock is strictly monotonic: a later write has a later mtime.
		m1 := mtimeOf(h.sessions("proj-a"), "sess-1")
		h.append(main1, entries("d", 1))
		if m2 := mtimeOf(h.sessions("proj-a"), "sess-1"); m2 <= m1 {
			h.t.Fatalf("mtime after a second append = %d, want > %d", m2, m1)
		}
	}},
	{"08_list_sessions_never_lists_subpaths", func(h *harness) {
		h.append(main1, entries("a", 1))
		h.append(sub1, entries("s", 1))
		h.append(subX, entries("x", 1)) // a subkey whose main transcript was never written
		h.wantStrings("ListSessions", h.sessionIDs("proj-a"), []string{"sess-1"})
	}},
	{"09_delete_main_then_load_none_and_unknown_delete_ok", func(h *harness) {
		h.append(main1, entries("a", 2))
		h.delete(main1)
		h.wantEntries(main1, nil)
		h.delete(sessionstore.Key{ProjectKey: "proj-z", SessionID: "never"})
		h.delete(sessionstore.Key{ProjectKey: "proj-a", SessionID: "never", Subpath: "subagents/agent-q"})
	}},
	{"10_delete_main_cascades_to_subkeys_only", func(h *harness) {
		o, m2, sx := entries("o", 1), entries("m2", 1), entries("sx", 1)
		h.append(main1, entries("a", 2))
		h.append(sub1, entries("s1", 1))
		h.append(sub2, entries("s2", 1))
		h.append(main2, m2)
		h.append(subX, sx)
		h.append(other, o)
		h.delete(main1)
		h.wantEntries(main1, nil)
		h.wantEntries(sub1, nil)
		h.wantEntries(sub2, nil)
		h.wantStrings("ListSubkeys", h.subkeys(main1), nil)
		h.wantStrings("ListSessions", h.sessionIDs("proj-a"), []string{"sess-2"})
		h.wantEntries(main2, m2)
		h.wantEntries(subX, sx)
		h.wantEntries(other, o)
	}},
	{"11_delete_subkey_removes_only_it", func(h *harness) {
		m, s2 := entries("m", 2), entries("s2", 1)
		h.append(main1, m)
		h.append(sub1, entries("s1", 1))
		h.append(sub2, s2)
		h.delete(sub1)
		h.wantEntries(sub1, nil)
		h.wantEntries(sub2, s2)
		h.wantEntries(main1, m)
		h.wantStrings("ListSubkeys", h.subkeys(main1), []string{"subagents/agent-a2"})
	}},
	{"12_list_subkeys_of_that_session_only", func(h *harness) {
		h.append(main1, entries("m", 1))
		h.append(sub1, entries("s1", 1))
		h.append(sub2, entries("s2", 1))
		h.append(main2, entries("m2", 1))
		h.append(subX, entries("x", 1))
		h.wantStrings("ListSubkeys(sess-1)", h.subkeys(main1), []string{"subagents/agent-a1", "subagents/agent-a2"})
		h.wantStrings("ListSubkeys(sess-2)", h.subkeys(main2), []string{"subagents/agent-x"})
		h.wantStrings("ListSubkeys(proj-b/sess-1)", h.subkeys(other), nil)
	}},
	{"13_list_subkeys_excludes_main_and_unknown_is_empty", func(h *harness) {
		h.append(main1, entries("m", 1))
		h.wantStrings("ListSubkeys", h.subkeys(main1), nil)
		h.append(sub1, entries("s", 1))
		h.wantStrings("ListSubkeys", h.subkeys(main1), []string{"subagents/agent-a1"})
		h.wantStrings("ListSubkeys(unknown)", h.subkeys(sessionstore.Key{ProjectKey: "proj-a", SessionID: "nope"}), nil)
	}},
	{"14_summaries_one_per_main_session_monotonic_gone_after_delete", func(h *harness) {
		if got := h.summaries("proj-unknown"); len(got) != 0 {
			h.t.Fatalf("summaries of an unknown project = %v, want empty", got)
		}
		h.append(main1, entries("a", 2))
		h.append(sub1, entries("s", 2))
		h.append(main2, entries("b", 1))
		h.append(other, entries("c", 1))
		sums := h.summaries("proj-a")
		var ids []string
		for _, s := range sums {
			ids = append(ids, s.SessionID)
			if s.MTime <= 1e12 {
				h.t.Fatalf("summary mtime %d is not epoch milliseconds", s.MTime)
			}
			if s.Data == nil {
				h.t.Fatalf("summary of %s has no data object", s.SessionID)
			}
		}
		slices.Sort(ids)
		h.wantStrings("summary ids", ids, []string{"sess-1", "sess-2"})
		before := summaryOf(h, sums, "sess-1")
		// Summaries share the list_sessions clock: never older than the session.
		if m := mtimeOf(h.sessions("proj-a"), "sess-1"); before.MTime < m {
			h.t.Fatalf("summary mtime %d < list_sessions mtime %d: the SDK would treat it as stale", before.MTime, m)
		}
		h.append(main1, entries("d", 1))
		after := summaryOf(h, h.summaries("proj-a"), "sess-1")
		if after.SessionID != "sess-1" || after.MTime < before.MTime {
			h.t.Fatalf("folding moved the summary: %+v → %+v", before, after)
		}
		if m := mtimeOf(h.sessions("proj-a"), "sess-1"); after.MTime < m {
			h.t.Fatalf("summary mtime %d < list_sessions mtime %d after a fold", after.MTime, m)
		}
		h.delete(main1)
		for _, s := range h.summaries("proj-a") {
			if s.SessionID == "sess-1" {
				h.t.Fatal("summary of a deleted session is still listed")
			}
		}
	}},
}

func mtimeOf(list []sessionstore.SessionInfo, id string) int64 {
	for _, s := range list {
		if s.SessionID == id {
			return s.MTime
		}
	}
	return 0
}

func summaryOf(h *harness, list []sessionstore.Summary, id string) sessionstore.Summary {
	h.t.Helper()
	for _, s := range list {
		if s.SessionID == id {
			return s
		}
	}
	h.t.Fatalf("no summary for %s in %v", id, list)
	return sessionstore.Summary{}
}
