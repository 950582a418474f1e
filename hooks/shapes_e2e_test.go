package hooks_test

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/internal/testbed"
	"github.com/flowerhq/flower/scripted"
)

// TestRecordToolShapes records the PostToolUse input of every BULKY tool
// from the real CLI into testdata/shapes/<Tool>.json (and PostToolUseFailure
// inputs into <Tool>.failure.json). It runs only with FLOWER_RECORD_SHAPES=1:
// the recorded files are what spill_test.go checks the spill guard against.
func TestRecordToolShapes(t *testing.T) {
	if os.Getenv("FLOWER_RECORD_SHAPES") != "1" {
		t.Skip("set FLOWER_RECORD_SHAPES=1 to re-record testdata/shapes from the real CLI")
	}
	page := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><body><h1>flower page</h1><p>%s</p></body></html>", strings.Repeat("petal ", 50))
	}))
	defer page.Close()
	rec := t.TempDir()
	call := func(name string, input any) scripted.Reply {
		b, _ := json.Marshal(input)
		return scripted.Reply{ToolUse: &scripted.Block{Name: name, Input: b}}
	}
	s := &scripted.Script{Conversations: []scripted.Conversation{
		{Name: "main", Match: scripted.Match{FirstUser: "record shapes"}, Replies: []scripted.Reply{
			call("Bash", map[string]any{"command": "echo shape-bash; echo to-stderr >&2", "description": "echo"}),
			call("Read", map[string]any{"file_path": "WS/notes.txt"}),
			call("Grep", map[string]any{"pattern": "flower", "output_mode": "content", "-n": true}),
			call("Grep", map[string]any{"pattern": "flower"}),
			call("Grep", map[string]any{"pattern": "flower", "output_mode": "count"}),
			call("Glob", map[string]any{"pattern": "*.txt"}),
			call("ToolSearch", map[string]any{"query": "select:WebFetch,WebSearch", "max_results": 5}),
			call("WebFetch", map[string]any{"url": page.URL + "/page", "prompt": "what is on the page"}),
			call("WebSearch", map[string]any{"query": "flower framework"}),
			{Text: "recorded"},
		}},
		{Name: "nested", Func: func(scripted.Request) scripted.Reply {
			return scripted.Reply{Text: "nested model answer about flower"}
		}},
	}}
	bed := testbed.New(t, s)
	ws := bed.Workspace
	for i := range s.Conversations[0].Replies {
		if tu := s.Conversations[0].Replies[i].ToolUse; tu != nil {
			tu.Input = json.RawMessage(strings.ReplaceAll(string(tu.Input), "WS/", ws+"/"))
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("a flower\nanother flower line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	record := fmt.Sprintf("cat > %s/$$-$RANDOM.json; echo '{}'", rec)
	settings := fmt.Sprintf(`{"skipWebFetchPreflight":true,"hooks":{"PostToolUse":[{"matcher":"*","hooks":[{"type":"command","command":%q}]}],
	  "PostToolUseFailure":[{"matcher":"*","hooks":[{"type":"command","command":%q}]}]}}`, record, record)
	sf := filepath.Join(bed.Home, "settings.json")
	if err := os.WriteFile(sf, []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	// WebFetch upgrades to https: trust the test server's certificate.
	ca := filepath.Join(bed.Home, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: page.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := bed.Command(t.Context(), "-p", "--output-format", "stream-json", "--verbose", "--settings", sf,
		"--allowedTools", "Bash Read Grep Glob WebFetch WebSearch ToolSearch", "--", "record shapes")
	cmd.Env = append(cmd.Env, "NODE_EXTRA_CA_CERTS="+ca)
	out, err := cmd.CombinedOutput()
	_, res := testbed.ParseStream(out)
	t.Logf("err %v result %s", err, res.Get("result"))
	files, _ := filepath.Glob(filepath.Join(rec, "*.json"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		in := gjson.ParseBytes(data)
		name := in.Get("tool_name").String()
		if in.Get("hook_event_name").String() == "PostToolUseFailure" {
			name += ".failure"
		}
		if name == "Grep" {
			mode := in.Get("tool_input.output_mode").String()
			if mode == "" {
				mode = "files_with_matches"
			}
			name += "." + mode
		}
		out := filepath.Join("testdata", "shapes", name+".json")
		if err := os.WriteFile(out, data, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded %s: %.300s", out, in.Get("tool_response").Raw)
	}
	for _, r := range bed.Model.Requests() {
		t.Logf("request %d conv=%q first_user=%.80q tools=%d", r.Seq, r.Conversation, r.FirstUser(), len(r.Tools()))
	}
}
