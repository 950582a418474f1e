package hooks

import (
	"testing"
)

// BenchmarkDelegateDecide is the pure decision (no process, no I/O).
func BenchmarkDelegateDecide(b *testing.B) {
	re, _ := toolMatcher(DefaultDelegateTools)
	in, _ := parseInput([]byte(`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status | head"},"tool_use_id":"t"}`))
	for b.Loop() {
		Delegate(in, re, true)
	}
}

// BenchmarkFenceDecide is the fence's decision on a Write inside a
// workspace of the usual shape (a few roots and protected paths): the
// path resolution is real file-system work (lstat/readlink per element).
func BenchmarkFenceDecide(b *testing.B) {
	ws := b.TempDir()
	wb := ws + "/.flower"
	cfg := FenceConfig{Roots: []string{ws, wb}, Protected: append([]string{wb + "/runs", wb + "/notes/需求.md", wb + "/notes/目标.md",
		wb + "/notes/问答记录.md", wb + "/flow.lock"}, WorkbenchRecords(wb)...)}
	in, _ := parseInput([]byte(`{"hook_event_name":"PreToolUse","tool_name":"Write","cwd":"` + ws + `","tool_input":{"file_path":"src/pkg/new.go","content":"x"}}`))
	for b.Loop() {
		if d := Fence(in, cfg); d.Verdict != Pass {
			b.Fatal(d.Reason)
		}
	}
}
