package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/internal/textclip"
)

// TestReadLine_BigLineSkeleton: a stream line of bigLine bytes or more
// reaches the machine as a skeleton — valid JSON, every string over
// keepRaw cut (ending with the ellipsis), everything else as it was — and
// the rest of a result's or a mirror frame's strings goes to the spool:
// text() decodes one whole (escapes, multi-byte characters and surrogate
// pairs included, whichever byte the cut falls on) and whole() gives the
// line back byte for byte. An assistant's cut text is counted, not kept.
// Control: a short line comes back as it is, with no cut.
func TestReadLine_BigLineSkeleton(t *testing.T) {
	t.Parallel()
	chunks := map[string]string{
		"ascii":     "a",
		"escapes":   `a line "quoted"\ttab\n`,
		"multibyte": "héllo wörld 日本語 ",
		"surrogate": "😀 ok ",
		"backslash": `\\`,
	}
	for name, chunk := range chunks {
		for _, shift := range []int{0, 1, 2, 3, 5} {
			text := strings.Repeat("x", shift) + strings.Repeat(chunk, (5<<18)/len(chunk))
			for _, typ := range []string{"result", "transcript_mirror", "assistant"} {
				js, _ := json.Marshal(text)
				if name == "surrogate" { // as a \u pair, the way some encoders write it
					js = bytes.ReplaceAll(js, []byte("😀"), []byte(`\ud83d\ude00`))
				}
				line := `{"type":"` + typ + `","subtype":"success","result":` + string(js) + `,"n":[1,{"a":"b"}],"tail":"END"}`
				sp := &spool{dir: t.TempDir()}
				got, cut, err := readLine(bufio.NewReaderSize(strings.NewReader(line+"\n"), 1<<20), sp)
				if err != nil || cut == nil {
					t.Fatalf("%s/%d/%s: %v, cut %v", name, shift, typ, err, cut)
				}
				if !json.Valid(got) || len(got) > maxEventText+200 {
					t.Fatalf("%s/%d/%s: skeleton of %d bytes, valid %v", name, shift, typ, len(got), json.Valid(got))
				}
				res := gjson.Get(unsafeString(got), "result")
				if !strings.HasSuffix(res.Str, textclip.Ellipsis) || !strings.HasPrefix(text, strings.TrimSuffix(strings.TrimSuffix(res.Str, textclip.Ellipsis), "\ufffd")) ||
					gjson.GetBytes(got, "tail").Str != "END" || gjson.GetBytes(got, "n.1.a").Str != "b" {
					t.Fatalf("%s/%d/%s: skeleton %q…", name, shift, typ, got[len(got)-80:])
				}
				c, ok := cut.at(offsetIn(got, res.Raw))
				if !ok || c.bytes != len(text) {
					t.Fatalf("%s/%d/%s: cut %+v %v, want %d bytes", name, shift, typ, c, ok, len(text))
				}
				whole, err := cut.whole()
				if typ == "assistant" {
					if err == nil || c.off >= 0 {
						t.Fatalf("%s/%d: an assistant's text was kept", name, shift)
					}
					sp.remove()
					continue
				}
				if err != nil || string(whole) != line {
					t.Fatalf("%s/%d/%s: whole %d bytes (want %d), %v", name, shift, typ, len(whole), len(line), err)
				}
				full, ok, err := cut.text(offsetIn(got, res.Raw))
				if err != nil || !ok || full != text {
					t.Fatalf("%s/%d/%s: text %d bytes (want %d) ok %v, %v", name, shift, typ, len(full), len(text), ok, err)
				}
				sp.remove()
			}
		}
	}
	// Control: a short line is itself.
	short := `{"type":"result","result":"` + strings.Repeat("y", 1000) + `"}`
	got, cut, err := readLine(bufio.NewReaderSize(strings.NewReader(short+"\n"), 1<<20), &spool{dir: t.TempDir()})
	if err != nil || cut != nil || string(got) != short {
		t.Fatalf("control: %d bytes, cut %v, %v", len(got), cut, err)
	}
}

// TestUnescapeInPlace decodes as encoding/json does.
func TestUnescapeInPlace(t *testing.T) {
	for _, raw := range []string{``, `plain`, `a\"b\\c\/d`, `\b\f\n\r\t`, `\u00e9\u65e5`, `\ud83d\ude00`, `\ud83d x`, `\ude00`, `é日😀`, `end\\`} {
		var want string
		if err := json.Unmarshal([]byte(`"`+raw+`"`), &want); err != nil {
			t.Fatal(err)
		}
		if got := string(unescapeInPlace([]byte(raw))); got != want {
			t.Errorf("%q: got %q, want %q", raw, got, want)
		}
	}
}
