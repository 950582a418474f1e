package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/testkit/flowerbin"
)

// TestRunOutcome: how a recorded run ended, from its manifest row alone.
func TestRunOutcome(t *testing.T) {
	review := func(text string) harness.StepResult {
		return harness.StepResult{Step: "执行-评审#1", OK: true, Text: text, Structured: flowerbin.TypedJudge("<检查清单>\n1. a\n</检查清单>", text).Structured}
	}
	untyped := harness.StepResult{Step: "执行-评审#1", OK: true, Text: "## 结论\n已达成\n## 理由\nok"}
	failing := review("## 结论\n已达成\n## 理由\nok")
	failing.Structured = []byte(`{"verdict":"achieved","checks":[{"check":"a","passed":false,"evidence":"no"}],"failed":[],"reason":"x"}`)
	work := harness.StepResult{Step: "执行", OK: true, Text: "done"}
	for _, tc := range []struct {
		name             string
		row              harness.ManifestRow
		outcome, verdict string
	}{
		{"achieved", harness.ManifestRow{Results: []harness.StepResult{work, review("## 结论\n已达成\n## 理由\nok")}}, "achieved", "achieved"},
		{"not yet", harness.ManifestRow{Results: []harness.StepResult{work, review("## 结论\n未达成\n## 理由\nno")}}, "not yet", "not_yet"},
		{"unreachable", harness.ManifestRow{Results: []harness.StepResult{review("## 结论\n无法达成\n## 理由\nno")}}, "unreachable", "unreachable"},
		{"failed", harness.ManifestRow{Results: []harness.StepResult{{Step: "执行", Error: "claude exited 1"}}}, "failed", ""},
		{"interrupted", harness.ManifestRow{Results: []harness.StepResult{{Step: "执行", Error: "context canceled"}}}, "interrupted", ""},
		{"a Markdown 已达成 with no typed verdict is no verdict", harness.ManifestRow{Results: []harness.StepResult{work, untyped}}, "not yet", "not_yet"},
		{"a typed achieved with a failing check", harness.ManifestRow{Results: []harness.StepResult{work, failing}}, "not yet", "not_yet"},
		{"a step without a judge", harness.ManifestRow{Results: []harness.StepResult{{Step: "step", OK: true, Text: "已达成"}}}, "done", ""},
		{"running", harness.ManifestRow{Running: []harness.RunningStep{{Step: "执行"}}}, "running", ""},
		{"nothing recorded", harness.ManifestRow{}, "failed", ""},
	} {
		if o, v := runOutcome(tc.row); o != tc.outcome || v != tc.verdict {
			t.Errorf("%s: %q, %q; want %q, %q", tc.name, o, v, tc.outcome, tc.verdict)
		}
	}
}

// TestGuardRecords: a denial carries the reason the model was told (the
// refused call's tool_result), a spill its file and size; a passing guard
// is neither (the control).
func TestGuardRecords(t *testing.T) {
	spill := filepath.Join(t.TempDir(), "out.txt")
	os.WriteFile(spill, make([]byte, 1234), 0o600)
	guard := func(data map[string]any) harness.Event {
		return harness.Event{Kind: harness.EventGuard, Step: "执行", Data: data}
	}
	events := []harness.Event{
		guard(map[string]any{"guard": "delegate", "decision": "deny", "tool": "Write", "tool_use_id": "tu1"}),
		{Kind: harness.EventToolResult, Step: "执行", Raw: json.RawMessage(`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"tu1","is_error":true,"content":"Error: 协调者不能自己写文件\n第二行"}]}}`)},
		guard(map[string]any{"guard": "spill", "decision": "rewrite", "tool": "Bash", "detail": map[string]any{"files": []any{spill}}}),
		guard(map[string]any{"guard": "delegate", "decision": "pass", "tool": "Agent"}),
	}
	d, s := guardRecords(events)
	if len(d) != 1 || d[0].Tool != "Write" || d[0].Guard != "delegate" || d[0].Reason != "协调者不能自己写文件" {
		t.Errorf("denials: %+v", d)
	}
	if len(s) != 1 || s[0].Path != spill || s[0].Bytes != 1234 || byteSize(s[0].Bytes) != "1.2 KB" {
		t.Errorf("spills: %+v", s)
	}
}
