package redact

import (
	"runtime"
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
	if shapeClean.has([]byte(filler + "x")) {
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
	if !shapeClean.has([]byte(filler)) {
		t.Error("a clean text redacted three times is not known clean: the memo is never used")
	}
	if shapeClean.has([]byte(filler + secret)) {
		t.Error("a text holding a secret was remembered as clean")
	}
}

// TestCleanMemoBounded: the memo forgets everything once it holds
// cleanCap bytes, and never holds a text shorter than cleanMin.
func TestCleanMemoBounded(t *testing.T) {
	short := strings.Repeat("s", cleanMin-1)
	shapeClean.add([]byte(short))
	if shapeClean.has([]byte(short)) {
		t.Error("a text under cleanMin was remembered")
	}
	first := []byte(strings.Repeat("f", cleanMin))
	shapeClean.add(first)
	for i := 0; shapeClean.bytes+cleanCap/8 <= cleanCap; i++ {
		shapeClean.add([]byte(strings.Repeat("x", cleanCap/8-8) + strings.Repeat("0", 7) + string(rune('a'+i))))
	}
	shapeClean.add([]byte(strings.Repeat("y", cleanCap/8)))
	if shapeClean.has(first) || shapeClean.bytes > cleanCap {
		t.Errorf("the memo holds %d bytes (cap %d) and still the first text", shapeClean.bytes, cleanCap)
	}
}

// TestCleanMemoLines: the lines of a JSON Lines file that were redacted
// one by one before (as flower mirrors them) are taken as they are, and a
// new line with a secret among them is still redacted; a line clean for
// one Redactor is not clean for another whose value it holds.
func TestCleanMemoLines(t *testing.T) {
	pad := strings.Repeat("a coherent answer, no curl command ", 10) // keywords of two rules
	value := "sk-value-OTHERSECRET"
	r := FromEnv([]string{"ANTHROPIC_API_KEY=sk-value-SECRETSECRET"})
	other := FromEnv([]string{"ANTHROPIC_API_KEY=" + value})
	lines := []string{`{"n":1,"t":"` + pad + `"}`, `{"n":2,"t":"` + pad + value + `"}`}
	for _, l := range lines {
		if got := r.String(l); got != l {
			t.Fatalf("a clean line changed: %q", got)
		}
	}
	if !r.clean().has([]byte(lines[0])) {
		t.Error("a clean JSON line redacted whole is not remembered: the memo is never used")
	}
	secret := `{"n":3,"t":"` + pad + "ghp_" + strings.Repeat("a1B2", 9) + `"}`
	file := lines[0] + "\n" + secret + "\n" + lines[1] + "\r\n"
	want := lines[0] + "\n" + `{"n":3,"t":"` + pad + Mark + `"}` + "\n" + lines[1] + "\r\n"
	if got := r.String(file); got != want {
		t.Errorf("the file redacted:\n%q\nwant\n%q", got, want)
	}
	if got, want := other.String(file), strings.ReplaceAll(want, value, Mark); got != want {
		t.Errorf("another Redactor took r's clean line for its own:\n%q\nwant\n%q", got, want)
	}
	if r.clean().has([]byte(secret)) {
		t.Error("a line holding a secret was remembered")
	}
	// Redactors with the same values (in any order) share a memo; others not.
	same := FromEnv([]string{"X_TOKEN=second-value-long", "ANTHROPIC_API_KEY=sk-value-SECRETSECRET"})
	same2 := FromEnv([]string{"ANTHROPIC_API_KEY=sk-value-SECRETSECRET", "Y_TOKEN=second-value-long"})
	if same.clean() != same2.clean() || same.clean() == r.clean() || r.clean() == other.clean() {
		t.Error("memos are shared by Redactors with different values, or not by those with the same")
	}
}

// TestCleanMemoLiterals: an escaped string literal found clean is
// remembered and taken as it is where it comes again; one with a secret,
// or one that does not decode, is not remembered.
func TestCleanMemoLiterals(t *testing.T) {
	r := FromEnv([]string{"ANTHROPIC_API_KEY=sk-value-LITERALSECRET"})
	pad := strings.Repeat(`a coherent line\nwith a curl in it `, 10)
	lit := `"` + pad + `"`
	secretLit := `"` + pad + `sk-value-LITERALSECRET"`
	badLit := `"` + pad + `\x"`
	doc := `{"a":` + lit + `,"b":` + secretLit + `,"c":` + lit + `}`
	want := `{"a":` + lit + `,"b":"` + strings.ReplaceAll(pad, `\n`, "\\n") + `[redacted]","c":` + lit + `}`
	for pass := 1; pass <= 2; pass++ {
		if got := r.String(doc); got != want {
			t.Errorf("pass %d: got\n%s\nwant\n%s", pass, got, want)
		}
	}
	if !r.clean().has([]byte(lit)) {
		t.Error("a clean escaped literal is not remembered: the memo is never used")
	}
	r.String(`{"d":` + badLit + `}`)
	if r.clean().has([]byte(secretLit)) || r.clean().has([]byte(badLit)) {
		t.Error("a literal with a secret, or one that does not decode, was remembered")
	}
}

// TestMemosWeak: a memo no Redactor holds any more is collected and its
// registry entry dropped; one still held is shared.
func TestMemosWeak(t *testing.T) {
	held := FromEnv([]string{"A_TOKEN=held-value-0123"})
	for i := range 50 {
		FromEnv([]string{"A_TOKEN=dropped-value-" + strings.Repeat("x", i)})
	}
	runtime.GC()
	FromEnv([]string{"A_TOKEN=one-more-value"}) // prunes the dead entries
	if again := FromEnv([]string{"A_TOKEN=held-value-0123"}); again.clean() != held.clean() {
		t.Error("a memo still held is not shared")
	}
	memos.Lock()
	n := len(memos.by)
	memos.Unlock()
	if n > 10 {
		t.Errorf("%d memos registered after 50 Redactors were dropped: the registry keeps dead memos", n)
	}
	runtime.KeepAlive(held)
}
