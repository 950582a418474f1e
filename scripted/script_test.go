package scripted_test

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/scripted"
)

func httpPost(url, body string) (int, error) {
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "empty script"},
		{"not json", "{", "bad script"},
		{"bad yaml", "conversations: [\n  - name: a\n   x", "bad YAML"},
		{"unknown field", `{"conversations":[{"replies":[{"txt":"x"}]}]}`, `unknown field "txt"`},
		{"no conversations", `{"conversations":[]}`, "no conversations"},
		{"no replies", `{"conversations":[{"name":"a"}]}`, `"a" has no replies`},
		{"dup names", `{"conversations":[{"name":"a","replies":[{"text":"x"}]},{"name":"a","replies":[{"text":"x"}]}]}`, "duplicate name"},
		{"empty reply", `{"conversations":[{"replies":[{}]}]}`, "no text, tool_use, blocks or fault"},
		{"tool without name", `{"conversations":[{"replies":[{"tool_use":{"input":{}}}]}]}`, "needs a name"},
		{"input not object", `{"conversations":[{"replies":[{"tool_use":{"name":"Bash","input":[1]}}]}]}`, "JSON object"},
		{"bad status", `{"conversations":[{"replies":[{"fault":{"status":418}}]}]}`, "fault status 418"},
		{"fault with text", `{"conversations":[{"replies":[{"text":"x","fault":{"status":500}}]}]}`, "cannot also carry"},
		{"drop and stall", `{"conversations":[{"replies":[{"fault":{"drop":true,"stall":true}}]}]}`, "drops, stalls or drips"},
		{"stall and drip", `{"conversations":[{"replies":[{"fault":{"stall":true,"drip":true}}]}]}`, "drops, stalls or drips"},
		{"drip with status", `{"conversations":[{"replies":[{"fault":{"drip":true,"status":500}}]}]}`, "no status"},
		{"bad drop point", `{"conversations":[{"replies":[{"fault":{"drop":true,"drop_at":"middle"}}]}]}`, `drop_at "middle"`},
		{"drop_at without drop", `{"conversations":[{"replies":[{"fault":{"status":500,"drop_at":"text"}}]}]}`, "needs drop"},
		{"drop with status", `{"conversations":[{"replies":[{"fault":{"drop":true,"status":500}}]}]}`, "no status"},
		{"blocks and text", `{"conversations":[{"replies":[{"text":"x","blocks":[{"text":"y"}]}]}]}`, "either blocks"},
		{"bad block type", `{"conversations":[{"replies":[{"blocks":[{"type":"image"}]}]}]}`, `"image"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scripted.Parse([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v, want one line containing %q", err, tc.want)
			}
		})
	}
}

func TestParseYAML(t *testing.T) {
	s, err := scripted.Parse([]byte("conversations:\n  - name: main\n    match: {first_user: hi}\n    replies:\n      - text: hello\n      - tool_use: {name: Bash, input: {command: ls}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Conversations[0].Match.FirstUser != "hi" || s.Conversations[0].Replies[1].ToolUse.Name != "Bash" {
		t.Fatalf("parsed %+v", s)
	}
}

func TestPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s, _ := scripted.Parse([]byte(`{"conversations":[{"replies":[{"text":"x"}]}]}`))
	_, err = scripted.Start(s, ln.Addr().String())
	if err == nil || !strings.Contains(err.Error(), "listen on "+ln.Addr().String()) {
		t.Fatalf("err = %v", err)
	}
}

func TestRoutesAndFaults(t *testing.T) {
	s, _ := scripted.Parse([]byte(`{"conversations":[
	  {"name":"a","match":{"first_user":"A"},"replies":[{"text":"one"},{"fault":{"status":401}}]},
	  {"name":"any","replies":[{"blocks":[{"text":"t"},{"name":"Read","input":{"file_path":"/x"}}]}]}]}`))
	srv, err := scripted.Start(s, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	post := func(body string) (int, string) {
		resp, err := http.Post(srv.URL()+"/v1/messages", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := post(`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"A please"}]}]}`)
	if code != 200 || gjson.Get(body, "content.0.text").String() != "one" || gjson.Get(body, "stop_reason").String() != "end_turn" {
		t.Fatalf("%d %s", code, body)
	}
	code, body = post(`{"model":"m","messages":[{"role":"user","content":"A again"}]}`)
	if code != 401 || gjson.Get(body, "error.type").String() != "authentication_error" {
		t.Fatalf("%d %s", code, body)
	}
	// "a" is used up: the catch-all answers, with a tool_use.
	code, body = post(`{"model":"m","stream":false,"messages":[{"role":"user","content":"A third"}]}`)
	if code != 200 || gjson.Get(body, "content.1.name").String() != "Read" || gjson.Get(body, "stop_reason").String() != "tool_use" {
		t.Fatalf("%d %s", code, body)
	}
	code, body = post(`{"model":"m","messages":[{"role":"user","content":"B"}]}`)
	if code != 400 || !strings.Contains(body, `first user message \"B\"`) {
		t.Fatalf("%d %s", code, body)
	}
	if code, _ := httpPost(srv.URL()+"/v1/complete", `{}`); code != 404 {
		t.Fatalf("unknown route: %d", code)
	}
	code, body = post(`{}`)
	_ = body
	if code, _ := httpPost(srv.URL()+"/v1/messages/count_tokens", `{"messages":[]}`); code != 200 {
		t.Fatalf("count_tokens %d", code)
	}
	reqs := srv.Requests()
	if len(reqs) != 7 || reqs[0].Conversation != "a" || reqs[2].Conversation != "any" || reqs[3].Conversation != "" {
		t.Fatalf("recorded %+v", reqs)
	}
}

func TestStreamShape(t *testing.T) {
	s, _ := scripted.Parse([]byte(`{"conversations":[{"replies":[{"blocks":[{"text":"héllo wörld, a longer text that needs more than one delta chunk to arrive"},{"name":"Bash","input":{"command":"echo hi"}}],"usage":{"input_tokens":150000,"output_tokens":3}}]}]}`))
	srv, _ := scripted.Start(s, "127.0.0.1:0")
	defer srv.Close()
	resp, err := http.Post(srv.URL()+"/v1/messages", "application/json", strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var events []string
	var text, js string
	for _, line := range strings.Split(string(b), "\n") {
		if ev, ok := strings.CutPrefix(line, "event: "); ok {
			events = append(events, ev)
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			text += gjson.Get(d, "delta.text").String()
			js += gjson.Get(d, "delta.partial_json").String()
			if gjson.Get(d, "type").String() == "message_delta" && gjson.Get(d, "usage.input_tokens").Int() != 150000 {
				t.Errorf("usage not carried: %s", d)
			}
		}
	}
	seq := strings.Join(events, ",")
	if !strings.HasPrefix(seq, "message_start,ping,content_block_start,content_block_delta,content_block_delta") ||
		!strings.HasSuffix(seq, "content_block_stop,message_delta,message_stop") {
		t.Errorf("events %s", seq)
	}
	if text != "héllo wörld, a longer text that needs more than one delta chunk to arrive" || gjson.Get(js, "command").String() != "echo hi" {
		t.Errorf("text %q json %q", text, js)
	}
}
