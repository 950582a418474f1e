package sessionstore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// The raw walker and decoder agree with encoding/json on awkward text.
func TestJSONScanAgreesWithEncodingJSON(t *testing.T) {
	for _, text := range []string{
		"", "plain", "line\nline\n", "quote \" and back\\slash \\n not a newline",
		"tab\tcr\r ctrl \x01 \x1f", "ü日本語😀 and \u2028", strings.Repeat("x\n", 1000), "ends with \\",
	} {
		raw, _ := json.Marshal(text)
		r := string(raw)
		if got := jsonStringRunes(r); got != utf8.RuneCountInString(text) {
			t.Errorf("jsonStringRunes(%q) = %d, want %d", r, got, utf8.RuneCountInString(text))
		}
		if got := str(r); got != text {
			t.Errorf("str(%q) = %q", r, got)
		}
		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		nl, ends := unescapeTo(w, r)
		w.Flush()
		if buf.String() != text || nl != strings.Count(text, "\n") || ends != strings.HasSuffix(text, "\n") {
			t.Errorf("unescapeTo(%q) = %q, %d, %v", r, buf.String(), nl, ends)
		}
		if n := rawPrefix(r, 3); str(r[:n]+`"`) != string([]rune(text)[:min(3, utf8.RuneCountInString(text))]) {
			t.Errorf("rawPrefix(%q, 3) = %q", r, r[:n])
		}
		obj := `{"a" : ` + r + ` , "b":{"c":[1,{"d":"}"}]},"e":null,"f":-1.5e3,"g":true}`
		var keys []string
		members(obj, func(k, v string) bool {
			keys = append(keys, k)
			if k == "a" && v != r {
				t.Errorf("member a = %q, want %q", v, r)
			}
			if k == "b" && v != `{"c":[1,{"d":"}"}]}` {
				t.Errorf("member b = %q", v)
			}
			return true
		})
		if strings.Join(keys, ",") != "a,b,e,f,g" {
			t.Errorf("members keys = %v", keys)
		}
		if a, f, d := member(obj, "a"), member(obj, "f"), member(obj, "d"); a != r || f != "-1.5e3" || d != "" {
			t.Errorf("member a, f, d (nested, not a member) = %q, %q, %q", a, f, d)
		}
	}
}
