package redact

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/flowerhq/flower/testkit/fakesecrets"
)

// TestRulesLoad: the vendored gitleaks rule file and flower's own load,
// and every rule and allowlist compiles (a newer gitleaks.toml copied in
// is checked here).
func TestRulesLoad(t *testing.T) {
	set := loadRules(gitleaksRules, flowerRules)
	ids := map[string]bool{}
	for _, r := range set.rules {
		ids[r.def.ID] = true
		r.regexp()
		for _, a := range r.allow {
			a.regexps()
		}
		if r.global != nil {
			r.global.regexps()
		}
	}
	if len(set.rules) < 200 {
		t.Errorf("%d rules loaded, want gitleaks' 200 and more", len(set.rules))
	}
	for _, id := range []string{"github-pat", "aws-access-token", "private-key", "jwt", "slack-webhook-url", "stripe-access-token", "gcp-api-key", "npm-access-token", "pypi-upload-token", "gitlab-pat", "anthropic-api-key", "openai-api-key", "flower-url-credentials", "flower-authorization-header"} {
		if !ids[id] {
			t.Errorf("rule %s not loaded", id)
		}
	}
}

// contexts place a sample's text where a leak was found: at a line start,
// after a tab, and inside JSON after an escaped newline, tab, U+2028 or
// Go's \u003c, in JSON inside a JSON string, and in JSON Lines.
var contexts = []struct {
	name string
	json bool
	wrap func(text string) string
}{
	{"line-start", false, func(s string) string { return "output:\n" + s + "\nend" }},
	{"alone", false, func(s string) string { return s }},
	{"after-tab", false, func(s string) string { return "k\t" + s }},
	{"json-newline", true, func(s string) string { return jsonOf(map[string]string{"out": "total 1\n" + s + "\n"}) }},
	{"json-tab", true, func(s string) string { return jsonOf(map[string]string{"out": "\t" + s}) }},
	{"json-u2028", true, func(s string) string { return jsonOf(map[string]string{"out": "x\u2028" + s}) }},
	{"json-u003c", true, func(s string) string { return jsonOf(map[string]string{"out": "<" + s + ">"}) }},
	{"json-in-json", true, func(s string) string {
		return jsonOf(map[string]string{"content": jsonOf(map[string]string{"stdout": "a\n" + s})})
	}},
	{"jsonl", false, func(s string) string {
		return jsonOf(map[string]int{"n": 1}) + "\n" + jsonOf(map[string]any{"m": []string{"\n" + s}}) + "\n"
	}},
	{"json-escaped-text", false, func(s string) string { return `log: "a\n` + strings.ReplaceAll(s, "\n", `\n`) + `\n"` }},
}

// jsonOf is v as Go's encoding/json writes it (<, > and U+2028 escaped).
func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestSamplesRedacted: every shape, in every context, leaves no part of
// its secret; JSON stays valid JSON.
func TestSamplesRedacted(t *testing.T) {
	var r *Redactor
	for _, s := range fakesecrets.Samples() {
		for _, c := range contexts {
			in := c.wrap(s.Text)
			out := r.String(in)
			for _, sec := range s.Secrets {
				if strings.Contains(out, sec) {
					t.Errorf("%s in %s: %.16s… left in %q", s.Name, c.name, sec, out)
				}
			}
			if c.json && !json.Valid([]byte(out)) {
				t.Errorf("%s in %s: not JSON after redaction: %s", s.Name, c.name, out)
			}
		}
	}
}

// TestSamplesControl: without redaction every secret is in its context
// (the test above could fail), and each sample is found by a rule.
func TestSamplesControl(t *testing.T) {
	for _, s := range fakesecrets.Samples() {
		for _, c := range contexts {
			in := c.wrap(s.Text)
			if c.name == "json-in-json" || c.name == "json-escaped-text" {
				continue // escaped twice: the secret itself holds no escape, but a key block's lines are joined by one
			}
			for _, sec := range s.Secrets {
				if !strings.Contains(in, sec) {
					t.Errorf("%s in %s: the input lacks %.16s…", s.Name, c.name, sec)
				}
			}
		}
	}
}

// TestKeepsOrdinaryText: prose, code and near misses pass unchanged, and
// with no secret Bytes returns its argument itself.
func TestKeepsOrdinaryText(t *testing.T) {
	var r *Redactor
	for _, in := range []string{
		"the authorization header carries a bearer token",
		`{"type":"assistant","usage":{"input_tokens":12,"output_tokens":3},"session_id":"3f0c9a52-1b7e-4c1a-9a0e-5d2f8e6b7c41"}`,
		"ghp_tooShort and AKIA lower and sk_live_short",
		"see https://example.com/a:b@ and http://localhost:8080/x",
		"func key(s string) string { return s }",
		`{"command":"cat -n numbers.txt","description":"show the list"}`,
	} {
		b := []byte(in)
		out := r.Bytes(b)
		if string(out) != in {
			t.Errorf("changed %q to %q", in, out)
		} else if !sameStart(out, b) {
			t.Errorf("copied %q", in)
		}
	}
}

// TestJSONOnlyChangedStrings: only the string holding a secret is
// re-encoded; every other byte of the JSON stays as it was.
func TestJSONOnlyChangedStrings(t *testing.T) {
	var r *Redactor
	tok := fakesecrets.Samples()[11].Secrets[0] // github-ghp
	in := `{"a": "x\u003cy\/z",  "b":["\n` + tok + `"], "n": 1.50}`
	want := `{"a": "x\u003cy\/z",  "b":["\n` + Mark + `"], "n": 1.50}`
	if got := r.String(in); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// benchSize is the transcript of BenchmarkTranscript (20 MB).
var benchSize = 20 << 20

// BenchmarkTranscript: redaction throughput on a 20 MB transcript of
// claude's JSON Lines with a few secrets, beside copying it unredacted.
func BenchmarkTranscript(b *testing.B) {
	data := transcript(benchSize)
	b.Run("copy", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			_ = bytes.Clone(data)
		}
	})
	b.Run("redact", func(b *testing.B) {
		r := FromEnv([]string{"ANTHROPIC_API_KEY=sk-ant-not-in-the-text-0123456789"})
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			_ = r.Bytes(data)
		}
	})
}

// transcript is about n bytes of transcript-like JSON Lines: assistant
// turns, tool calls and tool results (code, logs), one secret per 500 lines.
func transcript(n int) []byte {
	samples := fakesecrets.Samples()
	code := strings.Repeat("func handler(w http.ResponseWriter, r *http.Request) {\n\tkey := r.URL.Query().Get(\"api_key\")\n\tlog.Printf(\"token %s\", key)\n}\n", 8)
	var buf bytes.Buffer
	for i := 0; buf.Len() < n; i++ {
		out := code
		if i%500 == 0 {
			out += "\n" + samples[i/500%len(samples)].Text + "\n"
		}
		lines := []any{
			map[string]any{"type": "assistant", "sessionId": "3f0c9a52-1b7e-4c1a-9a0e-5d2f8e6b7c41", "message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": "I will read the handler and check where the key comes from."}, map[string]any{"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": map[string]string{"command": "cat -n handler.go"}}}, "usage": map[string]int{"input_tokens": 1200, "output_tokens": 80}}},
			map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_01", "content": out}}}},
		}
		for _, l := range lines {
			b, _ := json.Marshal(l)
			buf.Write(b)
			buf.WriteByte('\n')
		}
	}
	return buf.Bytes()
}

// TestEscapedKeywords: a keyword written with JSON escapes (\u0067 for g,
// \/ for /) is found once the string is decoded.
func TestEscapedKeywords(t *testing.T) {
	var r *Redactor
	tok := fakesecrets.Samples()[11].Secrets[0] // github-ghp
	for _, in := range []string{
		`{"a":"\u0067` + tok[1:] + `"}`,
		`{"a":"see postgres:\/\/admin:s3cretPassw0rd@db\/app"}`,
	} {
		out := r.String(in)
		if strings.Contains(out, tok[4:]) || strings.Contains(out, "s3cretPassw0rd") || !strings.Contains(out, Mark) {
			t.Errorf("%s → %s", in, out)
		}
	}
}
