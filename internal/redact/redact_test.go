package redact

import "testing"

func TestRedact(t *testing.T) {
	env := map[string]string{
		"ANTHROPIC_API_KEY":       "sk-ant-api03-SECRETSECRET",
		"CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat01-TOKENTOKEN",
		"ANTHROPIC_AUTH_TOKEN":    "short",              // under MinLen: ordinary text survives
		"HOME":                    "/home/not-a-secret", // not a credential variable
	}
	r := New(func(k string) string { return env[k] })
	for _, tc := range []struct{ in, want string }{
		{"key=sk-ant-api03-SECRETSECRET.", "key=[redacted]."},
		{`{"t":"sk-ant-oat01-TOKENTOKEN","u":"sk-ant-api03-SECRETSECRET"}`, `{"t":"[redacted]","u":"[redacted]"}`},
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

func TestNilRedactor(t *testing.T) {
	r := New(func(string) string { return "" })
	if r != nil {
		t.Fatal("a redactor without secrets")
	}
	if r.String("sk-ant-api03-SECRETSECRET") != "sk-ant-api03-SECRETSECRET" || string(r.Bytes([]byte("x"))) != "x" {
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
