package hooklite

import (
	"bytes"
	"testing"
)

const testNonce = "00112233445566778899aabbccddeeff"

func TestParseAnswer(t *testing.T) {
	good := AnswerPrefix + testNonce + `","exit":2,"stdout":"7b7d0a","stderr":"6e6f"}`
	a, ok := parseAnswer([]byte(good), []byte(testNonce))
	if !ok || a.exit != 2 || string(a.stdout) != "{}\n" || string(a.stderr) != "no" {
		t.Fatalf("control: %q parsed to %+v %v", good, a, ok)
	}
	for name, line := range map[string]string{
		"decline":        `{"kind":"hook_answer","decline":true}`,
		"another nonce":  AnswerPrefix + "ffeeddccbbaa99887766554433221100" + `","exit":0,"stdout":"","stderr":""}`,
		"no exit":        AnswerPrefix + testNonce + `","stdout":"","stderr":""}`,
		"exit too big":   AnswerPrefix + testNonce + `","exit":256,"stdout":"","stderr":""}`,
		"odd hex":        AnswerPrefix + testNonce + `","exit":0,"stdout":"7b7","stderr":""}`,
		"upper hex":      AnswerPrefix + testNonce + `","exit":0,"stdout":"7B7D","stderr":""}`,
		"escaped quote":  AnswerPrefix + testNonce + `","exit":0,"stdout":"7b\"7d","stderr":""}`,
		"trailing bytes": AnswerPrefix + testNonce + `","exit":0,"stdout":"","stderr":""} `,
		"no stderr":      AnswerPrefix + testNonce + `","exit":0,"stdout":""}`,
		"empty":          ``,
	} {
		if a, ok := parseAnswer([]byte(line), []byte(testNonce)); ok {
			t.Errorf("%s: %q accepted as %+v", name, line, a)
		}
	}
}

func TestHexRoundTrip(t *testing.T) {
	in := []byte("\x00\x7f\xff\"\\\n{}")
	out, ok := unhex(appendHex(nil, in))
	if !ok || !bytes.Equal(out, in) {
		t.Fatalf("%q came back as %q", in, out)
	}
	if _, ok := unhex([]byte("zz")); ok {
		t.Error("zz decoded")
	}
}

func TestFailClosed(t *testing.T) {
	for _, g := range Served {
		if want := g != "isolate"; failClosed(g) != want {
			t.Errorf("failClosed(%s) = %v", g, !want)
		}
	}
}
