package scripted_test

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/scripted"
)

// post sends body to the server's Messages endpoint with the given headers.
func post(t *testing.T, srv *scripted.Server, body string, header ...string) (int, string) {
	t.Helper()
	code, _, b := sendTo(t, srv.URL(), body, header...)
	return code, b
}

const claudeLike = `{"model":"m","system":[{"type":"text","text":"x-anthropic-billing-header: cc_version=2.1.328;"},{"type":"text","text":"You are a Claude agent"}],` +
	`"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"hello"}]}`

// A conversation's replies restart for every claude session, identified by
// the session header or, without it, by metadata.user_id; requests naming
// no session share one sequence (the control: replies do run out there).
func TestRepliesRestartPerSession(t *testing.T) {
	s, _ := scripted.Parse([]byte(`{"conversations":[{"name":"main","replies":[{"text":"first"},{"text":"second"}]}]}`))
	var log bytes.Buffer
	srv, err := scripted.Start(s, "127.0.0.1:0", scripted.WithLog(&log))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	text := func(code int, body string) string {
		if code != 200 {
			return body
		}
		return gjson.Get(body, "content.0.text").String()
	}
	meta := func(id string) string {
		return strings.Replace(claudeLike, `"model":"m"`, `"model":"m","metadata":{"user_id":"{\"device_id\":\"d\",\"session_id\":\"`+id+`\"}"}`, 1)
	}
	steps := []struct {
		name, body string
		header     []string
		want       string
	}{
		{"A first", claudeLike, []string{"X-Claude-Code-Session-Id", "aaaa-1"}, "first"},
		{"A second", claudeLike, []string{"X-Claude-Code-Session-Id", "aaaa-1"}, "second"},
		{"B restarts", claudeLike, []string{"X-Claude-Code-Session-Id", "bbbb-2"}, "first"},
		{"C by metadata", meta("cccc-3"), nil, "first"},
		{"C again by metadata", meta("cccc-3"), nil, "second"},
		{"no session", claudeLike, nil, "first"},
		{"no session again", claudeLike, nil, "second"},
	}
	for _, st := range steps {
		if got := text(post(t, srv, st.body, st.header...)); got != st.want {
			t.Errorf("%s: got %q, want %q", st.name, got, st.want)
		}
	}
	// Control: within one session the replies run out.
	if code, body := post(t, srv, claudeLike, "X-Claude-Code-Session-Id", "aaaa-1"); code != 400 || !strings.Contains(body, `conversation \"main\" matched but gave all its 2 replies in this claude session`) {
		t.Errorf("a used-up session still got %d %s", code, body)
	}
	reqs := srv.Requests()
	if reqs[2].Session != "bbbb-2" || reqs[3].Session != "cccc-3" || reqs[1].Reply != 1 || reqs[2].Reply != 0 {
		t.Errorf("routing fields: %+v", reqs[:4])
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != len(steps)+1 {
		t.Fatalf("log has %d lines, want %d:\n%s", len(lines), len(steps)+1, log.String())
	}
	if want := "#2 POST /v1/messages session=aaaa-1 conversation=main reply=1 model=m status=200"; lines[1] != want {
		t.Errorf("log line = %q, want %q", lines[1], want)
	}
	if !strings.Contains(lines[len(lines)-1], "conversation=(unmatched) reply=- model=m status=400") {
		t.Errorf("unmatched log line = %q", lines[len(lines)-1])
	}
}

// claude's helper requests (from claude, no tools) get the built-in answer,
// shaped by the JSON schema they ask for, and never consume a reply; the
// same body with tools (a real turn) does consume one.
func TestAuxiliaryRequestsGetBuiltInAnswer(t *testing.T) {
	s, _ := scripted.Parse([]byte(`{"conversations":[{"name":"main","match":{"first_user":"hello"},"replies":[{"text":"the scripted reply"}]}]}`))
	srv, err := scripted.Start(s, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	title := strings.Replace(claudeLike, `"tools":[{"name":"Bash"}],`, `"output_config":{"format":{"type":"json_schema","schema":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}}},`, 1)
	title = strings.Replace(title, `"content":"hello"`, `"content":"<session>\nhello\n</session>"`, 1)
	for i := 0; i < 2; i++ {
		code, body := post(t, srv, title, "X-Claude-Code-Session-Id", "s1")
		if code != 200 || gjson.Get(gjson.Get(body, "content.0.text").String(), "title").String() == "" {
			t.Fatalf("title request: %d %s", code, body)
		}
	}
	plain := strings.Replace(claudeLike, `"tools":[{"name":"Bash"}],`, ``, 1)
	if code, body := post(t, srv, plain, "X-Claude-Code-Session-Id", "s1"); code != 200 || gjson.Get(body, "content.0.text").String() == "the scripted reply" {
		t.Fatalf("plain helper request: %d %s", code, body)
	}
	if code, body := post(t, srv, claudeLike, "X-Claude-Code-Session-Id", "s1"); code != 200 || gjson.Get(body, "content.0.text").String() != "the scripted reply" {
		t.Fatalf("the real turn did not get its reply: %d %s", code, body)
	}
	if got := len(srv.RequestsFor("(auxiliary)")); got != 3 {
		t.Errorf("auxiliary requests = %d, want 3", got)
	}
	// Without claude's billing header a toolless request is an ordinary one.
	if code, _ := post(t, srv, `{"model":"m","messages":[{"role":"user","content":"hello"}]}`); code != 200 || len(srv.RequestsFor("main")) != 2 {
		t.Errorf("a plain request was taken for a helper one: %d", code)
	}
}

// The 400 for an unmatched request clips long texts on rune boundaries.
func TestUnmatchedMessageClipsOnRunes(t *testing.T) {
	s, _ := scripted.Parse([]byte(`{"conversations":[{"match":{"first_user":"nothing"},"replies":[{"text":"x"}]}]}`))
	srv, _ := scripted.Start(s, "127.0.0.1:0")
	defer srv.Close()
	for _, prefix := range []string{"", "a", "ab"} { // shift the cut through a 3-byte rune
		code, body := post(t, srv, `{"model":"m","messages":[{"role":"user","content":"`+prefix+strings.Repeat("确认需求", 80)+`"}]}`)
		msg := gjson.Get(body, "error.message").String()
		if code != 400 || !utf8.ValidString(msg) || strings.Contains(msg, "\ufffd") || !strings.Contains(msg, "确认需求…") && !strings.Contains(msg, "确认需…") && !strings.Contains(msg, "确认…") && !strings.Contains(msg, "确…") {
			t.Errorf("prefix %q: %d %q", prefix, code, msg)
		}
	}
}
