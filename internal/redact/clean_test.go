package redact

import (
	"strings"
	"testing"
)

// TestCleanMemo: a text the rules found clean is remembered byte for byte
// and its second redaction skips them, with the same result; a text with
// a secret is never remembered and is redacted every time, and a
// Redactor's values are replaced in a remembered text all the same.
func TestCleanMemo(t *testing.T) {
	filler := strings.Repeat("an ordinary sentence about an api and a token of thanks. ", 10)
	secret := "ghp_" + strings.Repeat("a1B2", 9)
	r := New(func(k string) string {
		if k == "ANTHROPIC_API_KEY" {
			return "sk-value-SECRETSECRET"
		}
		return ""
	})
	// Control: the memo is really consulted — a clean text is known after
	// one pass and a text one byte off is not.
	if knownClean([]byte(filler + "x")) {
		t.Error("a text never redacted counts as known clean")
	}
	for _, tc := range []struct {
		name, in, want string
		r              *Redactor
	}{
		{"clean", filler, filler, nil},
		{"clean, JSON", `{"a":"` + filler + `"}`, `{"a":"` + filler + `"}`, nil},
		{"a shape", filler + secret, filler + Mark, nil},
		{"a shape, JSON", `{"a":"` + filler + secret + `"}`, `{"a":"` + filler + Mark + `"}`, nil},
		{"a value in a remembered text", filler + "sk-value-SECRETSECRET", filler + Mark, r},
	} {
		for pass := 1; pass <= 3; pass++ {
			if got := tc.r.String(tc.in); got != tc.want {
				t.Errorf("%s, pass %d: got %q, want %q", tc.name, pass, got, tc.want)
			}
		}
	}
	if !knownClean([]byte(filler)) {
		t.Error("a clean text redacted three times is not known clean: the memo is never used")
	}
	if knownClean([]byte(filler + secret)) {
		t.Error("a text holding a secret was remembered as clean")
	}
}

// TestCleanMemoBounded: the memo forgets everything once it holds
// cleanCap bytes, and never holds a text shorter than cleanMin.
func TestCleanMemoBounded(t *testing.T) {
	short := strings.Repeat("s", cleanMin-1)
	rememberClean([]byte(short))
	if knownClean([]byte(short)) {
		t.Error("a text under cleanMin was remembered")
	}
	first := []byte(strings.Repeat("f", cleanMin))
	rememberClean(first)
	for i := 0; shapeClean.bytes+cleanCap/8 <= cleanCap; i++ {
		rememberClean([]byte(strings.Repeat("x", cleanCap/8-8) + strings.Repeat("0", 7) + string(rune('a'+i))))
	}
	rememberClean([]byte(strings.Repeat("y", cleanCap/8)))
	if knownClean(first) || shapeClean.bytes > cleanCap {
		t.Errorf("the memo holds %d bytes (cap %d) and still the first text", shapeClean.bytes, cleanCap)
	}
}
