package harness

import (
	"strings"
	"testing"
	"time"
)

// A step run with --json-schema: the words the model wrote before it called
// StructuredOutput are the step's text, the tool's input its Structured;
// words before an earlier tool call (a judge that ran a command first) are
// not. Control: the same stream without structured_output keeps the CLI's
// result text and no value.
func TestStream_StructuredOutput(t *testing.T) {
	lines := []string{
		`{"type":"system","subtype":"init","session_id":"s1"}`,
		`{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"先跑测试"}]}}`,
		`{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}`,
		`{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"## 结论\n已达成"}]}}`,
		`{"type":"assistant","message":{"id":"m2","content":[{"type":"tool_use","id":"t2","name":"StructuredOutput","input":{"verdict":"achieved"}}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":"Structured output provided successfully"}]}}`,
	}
	for _, tt := range []struct {
		name, result, text, structured string
	}{
		{"structured", `{"type":"result","subtype":"success","result":"{\"verdict\":\"achieved\"}","structured_output":{"verdict":"achieved"}}`,
			"## 结论\n已达成", `{"verdict":"achieved"}`},
		{"control: no structured_output", `{"type":"result","subtype":"success","result":"## 结论\n已达成"}`, "## 结论\n已达成", ""},
		{"control: null", `{"type":"result","subtype":"success","result":"x","structured_output":null}`, "x", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &stream{}
			now := time.Unix(0, 0)
			for _, l := range append(append([]string(nil), lines...), tt.result) {
				s.line([]byte(l), now)
			}
			v, said, ok := s.structured()
			text := s.final.Get("result").String()
			if ok {
				text = said
			}
			if ok != (tt.structured != "") || string(v) != tt.structured || strings.TrimSpace(text) != tt.text {
				t.Errorf("structured = %q, %q, %v; want %q, %q", v, text, ok, tt.structured, tt.text)
			}
		})
	}
}
