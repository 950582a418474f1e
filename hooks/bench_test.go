package hooks

import "testing"

// BenchmarkIsEphemeral measures the classifier on the test corpus: all of
// it, the read-only commands alone (every one is fully parsed and checked)
// and the bypass commands alone. cmds/s is the throughput figure.
func BenchmarkIsEphemeral(b *testing.B) {
	for _, c := range []struct {
		name   string
		corpus []string
	}{
		{"all", append(append([]string{}, readOnlyCommands...), bypassCommands...)},
		{"read-only", readOnlyCommands},
		{"bypass", bypassCommands},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				IsEphemeral(c.corpus[n%len(c.corpus)])
				n++
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "cmds/s")
		})
	}
}

// BenchmarkDelegateDecide is the pure decision (no process, no I/O).
func BenchmarkDelegateDecide(b *testing.B) {
	re, _ := ToolMatcher(DefaultDelegateTools)
	in, _ := ParseInput([]byte(`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status | head"},"tool_use_id":"t"}`))
	for b.Loop() {
		Delegate(in, re, true)
	}
}
