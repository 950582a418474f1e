package scripted

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// A script line gives a typed verdict: its reply is the Markdown text, then
// a StructuredOutput call with the object as input. Control: the same
// reply without structured has no such call.
func TestParse_StructuredReply(t *testing.T) {
	s, err := Parse([]byte("conversations:\n  - match: {role: judge}\n    replies:\n" +
		"      - text: \"## 结论\\n已达成\"\n        structured: {verdict: achieved, checks: [{check: a, passed: true, evidence: ls}], failed: [], reason: ok}\n" +
		"      - text: plain\n"))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false} {
		blocks := s.Conversations[0].Replies[i].content()
		last := blocks[len(blocks)-1]
		got := last.Type == "tool_use" && last.Name == StructuredTool
		if got != want || blocks[0].Type != "text" {
			t.Errorf("reply %d: blocks %+v", i, blocks)
		}
		if want && !strings.Contains(string(last.Input), `"verdict":"achieved"`) {
			t.Errorf("input %s", last.Input)
		}
	}
	if _, err := Parse([]byte(`{"conversations":[{"replies":[{"structured":["x"]}]}]}`)); err == nil {
		t.Error("a structured value that is not an object was accepted")
	}
}

// Checklist reads the judge prompt's numbered list; Achieved passes each
// item in order; GoalReply carries goal and checklist.
func TestChecklistAndTypedReplies(t *testing.T) {
	body, _ := json.Marshal(map[string]any{"messages": []any{map[string]any{"role": "user", "content": "请独立评审\n<目标>\nx\n</目标>\n<检查清单>\n1. a b\n2. 10. c\n</检查清单>\n自述 1. no"}}})
	r := Request{Body: body}
	if got := Checklist(r); !reflect.DeepEqual(got, []string{"a b", "10. c"}) {
		t.Errorf("Checklist = %q", got)
	}
	var v typedVerdict
	if err := json.Unmarshal(Achieved(r, "md").Structured, &v); err != nil || v.Verdict != "achieved" || len(v.Checks) != 2 || !v.Checks[1].Passed || v.Checks[1].Check != "10. c" || v.Failed == nil {
		t.Errorf("Achieved = %+v, %v", v, err)
	}
	if Checklist(Request{Body: []byte(`{"messages":[{"role":"user","content":"no list"}]}`)}) != nil {
		t.Error("a prompt without a checklist has one")
	}
	g := GoalReply("md", "goal", "x", "y")
	if g.Text != "md" || string(g.Structured) != `{"checklist":["x","y"],"goal":"goal"}` {
		t.Errorf("GoalReply = %+v %s", g, g.Structured)
	}
}
