package hooks

import "testing"

// BenchmarkDelegateDecide is the pure decision (no process, no I/O).
func BenchmarkDelegateDecide(b *testing.B) {
	re, _ := ToolMatcher(DefaultDelegateTools)
	in, _ := ParseInput([]byte(`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status | head"},"tool_use_id":"t"}`))
	for b.Loop() {
		Delegate(in, re, true)
	}
}
