package harness

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestRawCut: an event's Raw keeps the line's structure (ids, usage, the
// other blocks) with each text over maxEventText cut in place, escapes
// included; a line with no big text is kept as it is. Control: the short
// line comes back byte for byte.
func TestRawCut(t *testing.T) {
	big := strings.Repeat("a\"b\n", maxEventText/2) + "TAIL"
	line, _ := json.Marshal(map[string]any{"type": "assistant", "session_id": "s1", "message": map[string]any{
		"id": "m1", "usage": map[string]int{"input_tokens": 7},
		"content": []map[string]string{{"type": "text", "text": big}, {"type": "text", "text": "small"}, {"type": "text", "text": big}}}})
	res, _ := json.Marshal(map[string]any{"type": "result", "result": big, "total_cost_usd": 0.5})
	short := []byte(`{"type":"result","result":"ok"}`)
	for _, tt := range []struct {
		name, typ string
		line      []byte
		cut       int
	}{{"assistant", "assistant", line, 2}, {"result", "result", res, 1}, {"control: short", "result", short, 0}} {
		t.Run(tt.name, func(t *testing.T) {
			raw := rawCut(tt.line, bigTexts(tt.typ, unsafeString(tt.line)))
			if !gjson.ValidBytes(raw) {
				t.Fatalf("not JSON: %.200s", raw)
			}
			if tt.cut == 0 {
				if string(raw) != string(tt.line) {
					t.Fatalf("changed: %s", raw)
				}
				return
			}
			if strings.Contains(string(raw), "TAIL") || len(raw) > tt.cut*2*maxEventText+1024 {
				t.Fatalf("the big text is not cut: %d bytes", len(raw))
			}
			g := gjson.ParseBytes(raw)
			if tt.typ == "assistant" && (g.Get("message.id").String() != "m1" || g.Get("message.usage.input_tokens").Int() != 7 ||
				g.Get("message.content.1.text").String() != "small" || !strings.HasPrefix(g.Get("message.content.2.text").String(), "a\"b\n")) {
				t.Fatalf("structure lost: %.300s", raw)
			}
			if tt.typ == "result" && g.Get("total_cost_usd").Float() != 0.5 {
				t.Fatalf("structure lost: %.300s", raw)
			}
		})
	}
}
