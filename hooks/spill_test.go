package hooks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// loadShape reads a PostToolUse input recorded from the real CLI by
// TestRecordToolShapes (testdata/shapes).
func loadShape(t *testing.T, name string) Input {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "shapes", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	in, err := parseInput(data)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// inflate makes every string field (through objects) and every list of the
// recorded response big, keeping the shape.
func inflate(v any, big string) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k == "filePath" || k == "url" || k == "query" || k == "mode" || k == "type" || k == "codeText" {
				continue
			}
			v[k] = inflate(x, big)
		}
		return v
	case []any:
		out := []any{}
		for range 300 {
			out = append(out, strings.Repeat("entry/", 5))
		}
		return out
	case string:
		return big
	}
	return v
}

// shapeOf describes the keys and JSON kinds of v, recursively for objects.
func shapeOf(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := map[string]any{}
		for k, x := range v {
			m[k] = shapeOf(x)
		}
		return m
	case []any:
		return "list"
	case string:
		return "string"
	case json.Number, float64:
		return "number"
	case bool:
		return "bool"
	}
	return "null"
}

func decode(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return m
}

func TestSpillEveryBulkyToolInItsOwnShape(t *testing.T) {
	big := strings.Repeat("0123456789", 1000) // 10,000 chars
	re, _ := toolMatcher(BulkyTools)
	tests := []struct {
		shape string
		want  Verdict
		field []string // path of the text field that must now be a pointer
	}{
		{"Bash", Rewrite, []string{"stdout"}},
		{"Read", Rewrite, []string{"file", "content"}},
		{"Grep.content", Rewrite, []string{"content"}},
		{"Grep.count", Rewrite, []string{"content"}},
		{"Grep.files_with_matches", Pass, nil}, // only a list of names: lists are never touched
		{"Glob", Pass, nil},                    // idem
		{"WebFetch", Rewrite, []string{"result"}},
		{"WebSearch", Pass, nil}, // results is a list (may hold link blocks)
	}
	for _, tt := range tests {
		t.Run(tt.shape, func(t *testing.T) {
			dir := t.TempDir()
			in := loadShape(t, tt.shape)
			orig := decode(t, in.ToolResponse)
			inflated := inflate(orig, big)
			in.ToolResponse, _ = json.Marshal(inflated)
			d := Spill(in, SpillConfig{Dir: dir, Threshold: DefaultSpillThreshold, Tools: re})
			if d.Verdict != tt.want {
				t.Fatalf("verdict %s, want %s (%v)", d.Verdict, tt.want, d.Detail)
			}
			if tt.want != Rewrite {
				return
			}
			got := decode(t, d.UpdatedToolOutput)
			if !reflect.DeepEqual(shapeOf(got), shapeOf(decode(t, in.ToolResponse))) {
				t.Errorf("shape changed:\n got %v\nwant %v", shapeOf(got), shapeOf(inflated))
			}
			var v any = got
			for _, k := range tt.field {
				v = v.(map[string]any)[k]
			}
			text := v.(string)
			file := filepath.Join(dir, "spill", SpillName(big)+".txt")
			if text != SpillPointer(file, big) || !strings.Contains(text, file) || !strings.Contains(text, "10000") || !strings.HasSuffix(text, "\n"+big[:SpillPreviewChars]) {
				t.Errorf("field %v = %.200q", tt.field, text)
			}
			if b, err := os.ReadFile(file); err != nil || string(b) != big {
				t.Errorf("spill file: %v, %d bytes", err, len(b))
			}
		})
	}
}

func TestSpillLeavesAlone(t *testing.T) {
	re, _ := toolMatcher(BulkyTools)
	big := strings.Repeat("z", 5000)
	bash := func(resp string) Input {
		return Input{ToolName: "Bash", ToolInput: bashInput("cat x"), ToolResponse: json.RawMessage(resp)}
	}
	dir := t.TempDir()
	spillFile := filepath.Join(dir, "spill", "0123456789abcdef.txt")
	tests := []struct {
		name string
		in   Input
		cfg  SpillConfig
	}{
		{"under threshold", bash(`{"stdout":"short","stderr":""}`), SpillConfig{}},
		{"exactly threshold", bash(`{"stdout":"` + strings.Repeat("a", 4000) + `"}`), SpillConfig{}},
		{"plain string output", bash(`"` + big + `"`), SpillConfig{}},
		{"list output", bash(`["` + big + `"]`), SpillConfig{}},
		{"broken json", bash(`{"stdout":"` + big), SpillConfig{}},
		{"no output", bash(``), SpillConfig{}},
		{"image output", bash(`{"stdout":"` + big + `","isImage":true}`), SpillConfig{}},
		{"read image", Input{ToolName: "Read", ToolResponse: json.RawMessage(`{"type":"image","file":{"base64":"` + big + `","type":"image/png"}}`)}, SpillConfig{}},
		{"base64 field", bash(`{"base64":"` + big + `"}`), SpillConfig{}},
		{"text inside a list", bash(`{"content":[{"type":"text","text":"` + big + `"}]}`), SpillConfig{}},
		{"tool not matched", Input{ToolName: "Write", ToolResponse: json.RawMessage(`{"content":"` + big + `"}`)}, SpillConfig{}},
		{"subagent with main-only", Input{ToolName: "Bash", AgentID: "a", ToolResponse: json.RawMessage(`{"stdout":"` + big + `"}`)}, SpillConfig{MainOnly: true}},
		{"read back a spill file", Input{ToolName: "Read", ToolInput: json.RawMessage(`{"file_path":"` + spillFile + `"}`),
			ToolResponse: json.RawMessage(`{"type":"text","file":{"filePath":"` + spillFile + `","content":"` + big + `"}}`)}, SpillConfig{}},
		{"cat a spill file", bash(`{"stdout":"` + big + `"}`), SpillConfig{}},
	}
	tests[len(tests)-1].in.ToolInput = bashInput("cat .flower/spill/0123456789abcdef.txt | head -500")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Dir, cfg.Threshold, cfg.Tools = dir, DefaultSpillThreshold, re
			if d := Spill(tt.in, cfg); d.Verdict != Pass || d.UpdatedToolOutput != nil {
				t.Errorf("verdict %s, output %.100s", d.Verdict, d.UpdatedToolOutput)
			}
		})
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "spill")); len(entries) != 0 {
		t.Errorf("files were spilled: %v", entries)
	}
}

func TestSpillSubagentByDefaultAndUnicode(t *testing.T) {
	re, _ := toolMatcher(BulkyTools)
	text := strings.Repeat("花", 4001) // 4001 characters, 12003 bytes
	in := Input{ToolName: "Bash", AgentID: "a", ToolResponse: json.RawMessage(`{"stdout":"` + text + `","stderr":"<&>"}`)}
	d := Spill(in, SpillConfig{Dir: t.TempDir(), Tools: re})
	if d.Verdict != Rewrite {
		t.Fatalf("verdict %s", d.Verdict)
	}
	out := decode(t, d.UpdatedToolOutput)
	if s := out["stdout"].(string); !strings.HasSuffix(s, "\n"+strings.Repeat("花", SpillPreviewChars)) || !strings.Contains(s, " 4001") {
		t.Errorf("stdout %.120q", s)
	}
	if out["stderr"] != "<&>" {
		t.Errorf("stderr changed: %v", out["stderr"])
	}
	// The same text twice is one file.
	d2 := Spill(in, SpillConfig{Dir: filepath.Dir(filepath.Dir(d.Detail["files"].([]string)[0])), Tools: re})
	if d2.Detail["files"].([]string)[0] != d.Detail["files"].([]string)[0] {
		t.Errorf("not content-addressed")
	}
}

// A spill file keeps no credential from the environment (and is 0600); the
// control: without the variable set, the same text is stored verbatim.
func TestSpillRedactsCredentials(t *testing.T) {
	re, _ := toolMatcher(BulkyTools)
	const key = "plain-spill-SECRET-0123456789"             // no token shape: only the variable makes it a secret
	text := "note " + key + " " + strings.Repeat("x", 4100) // (after "key=" it would be one: gitleaks' generic-api-key)
	in := Input{ToolName: "Bash", AgentID: "a", ToolResponse: json.RawMessage(`{"stdout":"` + text + `"}`)}
	for _, set := range []bool{false, true} {
		if set {
			t.Setenv("ANTHROPIC_API_KEY", key)
		}
		d := Spill(in, SpillConfig{Dir: t.TempDir(), Tools: re})
		if d.Verdict != Rewrite {
			t.Fatalf("verdict %s", d.Verdict)
		}
		path := d.Detail["files"].([]string)[0]
		data, _ := os.ReadFile(path)
		if got := strings.Contains(string(data), key); got == set {
			t.Errorf("key set=%v: the spill file holds the key=%v", set, got)
		}
		if set && !strings.Contains(string(data), "note [redacted] ") {
			t.Errorf("spill file %.40q", data)
		}
		if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
			t.Errorf("spill file mode %o", st.Mode().Perm())
		}
	}
}

// A file under the text's name that holds another text (a hash collision,
// or a planted file) is never taken for it: the original output stands.
// The control: the same file holding the same text is reused.
func TestSpillRefusesAnotherTextUnderItsName(t *testing.T) {
	re, _ := toolMatcher(BulkyTools)
	big := strings.Repeat("q", 5000)
	in := Input{ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"x"}`),
		ToolResponse: json.RawMessage(`{"stdout":"` + big + `","stderr":""}`)}
	for _, tt := range []struct {
		held string
		want Verdict
	}{{"another text", Pass}, {big, Rewrite}} {
		dir := t.TempDir()
		must(t, os.MkdirAll(filepath.Join(dir, "spill"), 0o700))
		must(t, os.WriteFile(filepath.Join(dir, "spill", SpillName(big)+".txt"), []byte(tt.held), 0o600))
		d := Spill(in, SpillConfig{Dir: dir, Tools: re})
		if d.Verdict != tt.want {
			t.Errorf("file holding %.12q: verdict %s, want %s (%v)", tt.held, d.Verdict, tt.want, d.Detail)
		}
	}
}
