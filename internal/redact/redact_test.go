package redact

import (
	"bytes"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	env := map[string]string{
		"ANTHROPIC_API_KEY":       "sk-ant-api03-SECRETSECRET",
		"CLAUDE_CODE_OAUTH_TOKEN": "plain-oauth-TOKENTOKEN",
		"ANTHROPIC_AUTH_TOKEN":    "short",              // under MinLen: ordinary text survives
		"HOME":                    "/home/not-a-secret", // not a credential variable
	}
	r := New(func(k string) string { return env[k] })
	for _, tc := range []struct{ in, want string }{
		{"key=sk-ant-api03-SECRETSECRET.", "key=[redacted]."},
		{`{"t":"plain-oauth-TOKENTOKEN","u":"sk-ant-api03-SECRETSECRET"}`, `{"t":"[redacted]","u":"[redacted]"}`},
		{"a short word and /home/not-a-secret", "a short word and /home/not-a-secret"},
		{"", ""},
	} {
		if got := r.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := string(r.Bytes([]byte(tc.in))); got != tc.want {
			t.Errorf("Bytes(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestShapes: well-known token shapes are replaced with no variable naming
// them (a nil Redactor too); near misses and ordinary words stay.
func TestShapes(t *testing.T) {
	var r *Redactor
	for _, tc := range []struct{ in, want string }{
		{"key sk-ant-api03-abcdEFGH_ij-kl end", "key [redacted] end"},
		{"ghp_" + strings.Repeat("a1B2", 9), "[redacted]"},
		{"token=gho_" + strings.Repeat("Z", 36) + ";", "token=[redacted];"},
		{"github_pat_11ABCDEFG0" + strings.Repeat("x", 60), "[redacted]"},
		{"glpat-" + strings.Repeat("Ab1", 7), "[redacted]"},
		{"AKIAIOSFODNN7EXAMPLE", "[redacted]"},
		{"xoxb-1234567890-abcdefghij", "[redacted]"},
		{"xoxp-123456789012", "[redacted]"},
		// Near misses stay.
		{"sk-ant-short", "sk-ant-short"},
		{"ghp_tooShort", "ghp_tooShort"},
		{"AKIA lower akiaiosfodnn7example", "AKIA lower akiaiosfodnn7example"},
		{"my_var_name gh_pages xox", "my_var_name gh_pages xox"},
	} {
		if got := r.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := string(r.Bytes([]byte(tc.in))); got != tc.want {
			t.Errorf("Bytes(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestFromEnv: the value of any variable whose name ends in a secret
// suffix (8 characters or more) is redacted; other variables and short
// values stay.
func TestFromEnv(t *testing.T) {
	r := FromEnv([]string{"GITHUB_TOKEN=tok-1234567890", "OPENAI_API_KEY=open-key-value", "DB_PASSWORD=hunter2hunter2",
		"MY_CREDENTIALS=cred-cred-cred", "APP_SECRET=s3cr3t-value", "PATH=/usr/local/bin:/usr/bin", "SHORT_TOKEN=abc", "TOKENIZER=not-a-secret-x"})
	in := "tok-1234567890 open-key-value hunter2hunter2 cred-cred-cred s3cr3t-value /usr/local/bin:/usr/bin abc not-a-secret-x"
	want := "[redacted] [redacted] [redacted] [redacted] [redacted] /usr/local/bin:/usr/bin abc not-a-secret-x"
	if got := r.String(in); got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// TestNoCopyWithoutSecret: Bytes returns its argument itself when nothing
// is replaced (callers compare to find files to rewrite).
func TestNoCopyWithoutSecret(t *testing.T) {
	r := FromEnv([]string{"GITHUB_TOKEN=tok-1234567890"})
	in := []byte(`{"a_b":"ghp_short","sk-ant-":"x"}`)
	if out := r.Bytes(in); &out[0] != &in[0] {
		t.Fatal("Bytes copied text without a secret")
	}
}

func TestNilRedactor(t *testing.T) {
	r := New(func(string) string { return "" })
	if r != nil {
		t.Fatal("a redactor without secrets")
	}
	if r.String("plain-text-SECRETSECRET") != "plain-text-SECRETSECRET" || string(r.Bytes([]byte("x"))) != "x" {
		t.Fatal("nil redactor changed text")
	}
}

// A value that contains another is replaced whole, not as Mark+rest.
func TestLongestFirst(t *testing.T) {
	env := map[string]string{"ANTHROPIC_API_KEY": "abcdefgh", "AWS_SESSION_TOKEN": "abcdefgh-and-more"}
	r := New(func(k string) string { return env[k] })
	if got := r.String("x abcdefgh-and-more y abcdefgh"); got != "x [redacted] y [redacted]" {
		t.Fatalf("got %q", got)
	}
}

// TestWriter: what goes through a Writer is redacted, and Underlying finds
// the real stream.
func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	w := &Writer{W: &buf, R: FromEnv([]string{"GITHUB_TOKEN=tok-1234567890"})}
	if n, err := w.Write([]byte("a tok-1234567890 b\n")); err != nil || n != 19 || buf.String() != "a [redacted] b\n" {
		t.Fatalf("wrote %d %v %q", n, err, buf.String())
	}
	if Underlying(w) != &buf || Underlying(&buf) != &buf {
		t.Fatal("Underlying")
	}
}
