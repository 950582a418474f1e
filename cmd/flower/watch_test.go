package main

import (
	"strings"
	"testing"
	"time"

	"github.com/flowerhq/flower/harness"
)

// TestWatchLine: the events `runs show --watch` prints, and the chatter it
// leaves out.
func TestWatchLine(t *testing.T) {
	ev := func(kind, step string, data map[string]any) harness.Event {
		return harness.Event{Kind: kind, Step: step, Data: data, Time: time.Now()}
	}
	for _, tt := range []struct {
		ev   harness.Event
		want string // "" prints nothing
	}{
		{ev("step_start", "执行-评审#1", nil), "▶ review #1"},
		{ev("step_end", "执行", map[string]any{"ok": true, "attempts": 2}), "✓ work (2 attempts)"},
		{ev("step_end", "执行", map[string]any{"ok": false, "error": "api 401"}), "✗ work: api 401"},
		{ev("result", "执行", map[string]any{"num_turns": 3, "cost_usd": 0.5}), "work: 3 turns · $0.5000"},
		{ev("guard", "执行", map[string]any{"decision": "deny", "guard": "delegate", "tool": "Write"}), "denied Write in work (delegate guard)"},
		{ev("guard", "执行", map[string]any{"decision": "rewrite", "guard": "spill", "tool": "Bash"}), "spilled Bash output of work"},
		{ev("guard", "执行", map[string]any{"decision": "pass", "guard": "fence", "tool": "Write"}), ""},
		{ev("retry", "执行", map[string]any{"kind": "transient", "error": "529"}), "retry transient in work: 529"},
		{ev("step", "执行", map[string]any{"index": 2, "total": 3}), "step 3/3 执行"},
		{ev("status", "执行", nil), ""},
		{ev("assistant", "执行", map[string]any{"text": "hi"}), ""},
	} {
		got := strings.TrimSpace(watchLine(tt.ev, false))
		if got != tt.want {
			t.Errorf("%s %v: %q, want %q", tt.ev.Kind, tt.ev.Data, got, tt.want)
		}
	}
}
