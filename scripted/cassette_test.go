package scripted_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/scripted"
)

// body builds a claude-like request body in working directory cwd with the
// given first user text; extra is spliced in as more top-level fields.
func body(cwd, user, extra string) string {
	env, _ := json.Marshal("# Environment\n - Primary working directory: " + cwd + "\n - OS Version: Linux 6.1\n")
	u, _ := json.Marshal(user)
	return `{"model":"m",` + extra + `"system":[{"type":"text","text":"x-anthropic-billing-header: cc_version=2.1.328.abc;"},` +
		`{"type":"text","text":"You are a Claude agent","cache_control":{"type":"ephemeral"}}],` +
		`"tools":[{"name":"Bash","input_schema":{"type":"object"}}],` +
		`"messages":[{"role":"user","content":[{"type":"text","text":` + string(u) + `,"cache_control":{"type":"ephemeral"}}]},` +
		`{"role":"system","content":` + string(env) + `}]}`
}

// The key ignores exactly the documented volatile parts; each row's
// control changes a part that does count.
func TestRequestKeyNormalization(t *testing.T) {
	base := body("/home/u/ws", "write hello.txt in /home/u/ws", "")
	for _, tc := range []struct {
		name  string
		other string
		same  bool
	}{
		{"identical", base, true},
		{"metadata, max_tokens, stream", body("/home/u/ws", "write hello.txt in /home/u/ws", `"metadata":{"user_id":"x"},"max_tokens":5,"stream":true,`), true},
		{"billing header", strings.Replace(base, "cc_version=2.1.328.abc", "cc_version=2.1.329.xyz", 1), true},
		{"cache_control marks", strings.ReplaceAll(base, `,"cache_control":{"type":"ephemeral"}`, ""), true},
		{"working directory", body("/srv/other/ws", "write hello.txt in /srv/other/ws", ""), true},
		{"temp path", body("/home/u/ws", "see /tmp/TestA123/001/spill/x.txt", ""), true},
		{"uuid", body("/home/u/ws", "session 0b1c2d3e-1111-2222-3333-444455556666", ""), true},
		{"agent id and duration", body("/home/u/ws", "agentId: a0123456789abcdef <usage>duration_ms: 1766</usage>", ""), true},
		{"date", body("/home/u/ws", "Today's date is 2026-11-30.", ""), true},
		{"os version", strings.Replace(base, "Linux 6.1", "Darwin 24.0", 1), true},
		{"control: prompt", body("/home/u/ws", "write HOWDY.txt in /home/u/ws", ""), false},
		{"control: model", strings.Replace(base, `"model":"m"`, `"model":"n"`, 1), false},
		{"control: tools", strings.Replace(base, `"name":"Bash"`, `"name":"Read"`, 1), false},
		{"control: system", strings.Replace(base, "You are a Claude agent", "You are a different agent", 1), false},
		{"control: path outside temp and cwd", body("/home/u/ws", "write hello.txt in /home/u/elsewhere", ""), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref := base
			switch tc.name {
			case "temp path":
				ref = body("/home/u/ws", "see /tmp/TestB999/007/spill/x.txt", "")
			case "uuid":
				ref = body("/home/u/ws", "session 99999999-aaaa-bbbb-cccc-ddddeeeeffff", "")
			case "agent id and duration":
				ref = body("/home/u/ws", "agentId: afedcba9876543210 <usage>duration_ms: 2493</usage>", "")
			case "date":
				ref = body("/home/u/ws", "Today's date is 2027-01-02.", "")
			}
			if got := scripted.RequestKey([]byte(ref)) == scripted.RequestKey([]byte(tc.other)); got != tc.same {
				t.Errorf("same key = %v, want %v\n%v\n%v", got, tc.same, scripted.NormalizedRequest([]byte(ref)), scripted.NormalizedRequest([]byte(tc.other)))
			}
		})
	}
}

// upstreamScript answers "first" then "second" to the same request, and a
// tool call that names the recording's working directory across two stream
// deltas (the scripted model cuts them at 64 bytes).
const upstreamScript = `{"conversations":[
  {"name":"tool","match":{"first_user":"make the file"},"replies":[{"tool_use":{"name":"Write","input":{"content":"thirty characters of content..","file_path":"/rec/ws/out.txt"}}}]},
  {"name":"main","replies":[{"text":"first"},{"text":"second"},{"fault":{"status":529}}]}]}`

func sendTo(t *testing.T, url, b string, header ...string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/messages?beta=true", strings.NewReader(b))
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(out)
}

// sseText joins the text and JSON deltas of a streamed answer.
func sseText(s string) string {
	var out string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out += gjson.Get(d, "delta.text").String() + gjson.Get(d, "delta.partial_json").String()
		}
	}
	return out
}

// Record through the proxy, then replay: same answers in recorded order for
// a repeated request, the same stream, the fault status kept, the working
// directory rewritten, no credential in the file, and a 400 naming the
// closest exchange and the difference for anything else.
func TestRecordThenReplay(t *testing.T) {
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "env-token-0123456789")
	s, _ := scripted.Parse([]byte(upstreamScript))
	up, err := scripted.Start(s, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tape := filepath.Join(t.TempDir(), "c.cassette")
	rec, err := scripted.Record(up.URL(), tape, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const key = "sk-ant-header-key-abcdef"
	hello := body("/rec/ws", "say hello", `"stream":true,`)
	tool := body("/rec/ws", "make the file", `"stream":true,`)
	var recorded []string
	for _, b := range []string{hello, hello, tool, hello} {
		code, h, out := sendTo(t, rec.URL(), b, "X-Api-Key", key, "Authorization", "Bearer another-secret-value")
		recorded = append(recorded, fmt.Sprintf("%s|%s|%d", h.Get("Content-Type"), sseText(out), code))
	}
	rec.Close()
	up.Close()
	if recorded[0] != "text/event-stream|first|200" || !strings.Contains(recorded[2], "/rec/ws/out.txt") || !strings.HasSuffix(recorded[3], "|529") {
		t.Fatalf("through the proxy: %q", recorded)
	}
	data, _ := os.ReadFile(tape)
	if st, _ := os.Stat(tape); st.Mode().Perm() != 0o600 {
		t.Errorf("cassette mode %v, want 0600", st.Mode().Perm())
	}
	for _, secret := range []string{key, "another-secret-value", "env-token-0123456789"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("the cassette contains %q", secret)
		}
	}
	if strings.Count(string(data), "\n") != 4 || !strings.Contains(string(data), `"key":"sha256:`) || !strings.Contains(string(data), `"event":"message_start"`) {
		t.Fatalf("cassette:\n%.600s", data)
	}

	srv, err := scripted.ServeCassette(tape, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	play := func(b string) (int, string) {
		code, _, out := sendTo(t, srv.URL(), b)
		return code, out
	}
	if code, out := play(hello); code != 200 || sseText(out) != "first" {
		t.Errorf("1st hello: %d %q", code, sseText(out))
	}
	if code, out := play(hello); code != 200 || sseText(out) != "second" {
		t.Errorf("2nd hello: %d %q", code, sseText(out))
	}
	if code, out := play(strings.ReplaceAll(tool, "/rec/ws", "/play/ws")); code != 200 || gjson.Get(sseText(out), "file_path").String() != "/play/ws/out.txt" {
		t.Errorf("tool call in another workspace: %d %q", code, sseText(out))
	}
	if code, _ := play(hello); code != 529 {
		t.Errorf("3rd hello: status %d, want the recorded 529", code)
	}
	code, out := play(hello)
	if msg := gjson.Get(out, "error.message").String(); code != 400 || !strings.Contains(msg, "all 3 recorded exchanges for this request were already replayed") {
		t.Errorf("4th hello: %d %s", code, msg)
	}
	code, out = play(body("/rec/ws", "say HOWDY", `"stream":true,`))
	msg := gjson.Get(out, "error.message").String()
	if code != 400 || !strings.Contains(msg, `closest is exchange 0 (line 1, first user message "say hello")`) ||
		!strings.Contains(msg, `first difference at messages[0].content[0].text: recorded "say hello", got "say HOWDY"`) {
		t.Errorf("changed prompt: %d %s", code, msg)
	}
	if reqs := srv.Requests(); len(reqs) != 6 || reqs[0].Conversation != "cassette" || reqs[1].Reply != 1 || reqs[5].Conversation != "" {
		t.Errorf("requests: %+v", reqs)
	}
}

func TestLoadCassetteErrors(t *testing.T) {
	dir := t.TempDir()
	empty, bad := filepath.Join(dir, "empty"), filepath.Join(dir, "bad")
	os.WriteFile(empty, nil, 0o600)
	os.WriteFile(bad, []byte("{\"key\":1}\n"), 0o600)
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "missing"), "no such file"},
		{empty, "has no exchanges (record one with: flower model record"},
		{bad, "line 1"},
	} {
		if _, err := scripted.ServeCassette(tc.path, "127.0.0.1:0"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.path, err, tc.want)
		}
	}
	if _, err := scripted.Record("not a url", filepath.Join(dir, "x"), "127.0.0.1:0"); err == nil || !strings.Contains(err.Error(), "https://api.anthropic.com") {
		t.Errorf("bad upstream: %v", err)
	}
}
