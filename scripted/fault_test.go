package scripted_test

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowerhq/flower/scripted"
)

// Every recipe scripts/record-faults.sh records must parse.
func TestFaultRecipesParse(t *testing.T) {
	paths, _ := filepath.Glob("../scripts/faults/*.yaml")
	if len(paths) < 20 {
		t.Fatalf("found %d fault recipes, want the whole set", len(paths))
	}
	for _, p := range paths {
		if _, err := scripted.Load(p); err != nil {
			t.Error(err)
		}
	}
}

// Each fault kind reaches the wire the way its doc says: read raw with a
// plain HTTP client (the real CLI's view is in testdata/faults).
func TestFaultsOnTheWire(t *testing.T) {
	const long = "0123456789abcdefghijklmnopqrstuvwxyz-0123456789abcdefghijklmnopqrstuvwxyz-END"
	for _, tc := range []struct {
		name, reply string
		wantErr     bool   // the client sees no response at all
		status      int    // else: the status
		header      string // a header the answer carries (k: v)
		has, hasNot []string
	}{
		{name: "reset", reply: `{"fault":{"drop":true,"drop_at":"headers"}}`, wantErr: true},
		{name: "retry-after", reply: `{"fault":{"status":429,"retry_after":"7"}}`, status: 429, header: "Retry-After: 7", has: []string{"rate_limit_error"}},
		{name: "504", reply: `{"fault":{"status":504}}`, status: 504, has: []string{"timeout_error"}},
		{name: "after message_start", reply: `{"text":"` + long + `","fault":{"drop":true,"drop_at":"message_start"}}`, status: 200,
			has: []string{"event: message_start"}, hasNot: []string{"event: ping", "content_block_start"}},
		{name: "mid text", reply: `{"text":"` + long + `","fault":{"drop":true,"drop_at":"text"}}`, status: 200,
			has: []string{"0123456789abcdefghijklmnopqrstuvwxyz-"}, hasNot: []string{"END", "content_block_stop"}},
		{name: "mid tool_use", reply: `{"tool_use":{"name":"Bash","input":{"command":"` + long + `"}},"fault":{"drop":true,"drop_at":"tool_use"}}`, status: 200,
			has: []string{"input_json_delta"}, hasNot: []string{"END", "content_block_stop"}},
		{name: "control: whole", reply: `{"text":"` + long + `"}`, status: 200, has: []string{"END", "message_stop"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serveScript(t, `{"conversations":[{"replies":[`+tc.reply+`]}]}`)
			resp, err := http.Post(srv.URL()+"/v1/messages", "application/json",
				strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
			if tc.wantErr {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("got status %d, want a reset connection", resp.StatusCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body) // a cut stream ends in an error: keep what came
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if k, v, ok := strings.Cut(tc.header, ": "); ok && resp.Header.Get(k) != v {
				t.Errorf("header %s = %q, want %q", k, resp.Header.Get(k), v)
			}
			for _, w := range tc.has {
				if !strings.Contains(string(body), w) {
					t.Errorf("body lacks %q:\n%s", w, body)
				}
			}
			for _, w := range tc.hasNot {
				if strings.Contains(string(body), w) {
					t.Errorf("body has %q:\n%s", w, body)
				}
			}
		})
	}
}
