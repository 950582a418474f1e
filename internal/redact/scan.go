package redact

import (
	"bytes"
	"encoding/json"
	"sort"
)

// mayHold reports whether b may hold a secret: one of r's values or one
// keyword of a rule. Most text holds neither and is passed on untouched.
func (r *Redactor) mayHold(b []byte) bool {
	active, _ := rules().active(b)
	return r.holdsValue(b) || len(active) > 0
}

func (r *Redactor) holdsValue(b []byte) bool {
	if r == nil {
		return false
	}
	for _, v := range r.values {
		if bytes.Contains(b, v) {
			return true
		}
	}
	return false
}

// hidesKeyword reports whether JSON text b has an escape that may hide a
// keyword until it is decoded (\u0067 for g, \/ for /).
func hidesKeyword(b []byte) bool {
	return bytes.Contains(b, []byte(`\u`)) || bytes.Contains(b, []byte(`\/`))
}

// sameStart reports whether a and b start at the same byte (a is b, not
// a copy).
func sameStart(a, b []byte) bool {
	return len(a) > 0 && len(b) > 0 && &a[0] == &b[0]
}

// lines redacts text that is not one JSON value: each line that is a JSON
// object or array (JSON Lines) as JSON, every run of other lines as text
// (a private key block spans lines).
func (r *Redactor) lines(b []byte) []byte {
	var out []byte
	changed := false
	textStart := 0
	flushText := func(end int) {
		if end > textStart {
			t, ch := r.text(b[textStart:end])
			out = append(out, t...)
			changed = changed || ch
		}
	}
	for start := 0; start < len(b); {
		end := bytes.IndexByte(b[start:], '\n')
		if end < 0 {
			end = len(b)
		} else {
			end += start + 1
		}
		line := b[start:end]
		if t := bytes.TrimSpace(line); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
			if key := bytes.TrimRight(line, "\r\n"); r.clean().has(key) {
				flushText(start) // JSON that Bytes or lines left unchanged before
				out = append(out, line...)
				textStart = end
			} else if json.Valid(line) {
				flushText(start)
				j := r.jsonText(line)
				same := sameStart(j, line) && len(j) == len(line)
				if same {
					r.clean().add(key)
				}
				changed = changed || !same
				out = append(out, j...)
				textStart = end
			}
		}
		start = end
	}
	flushText(len(b))
	if !changed {
		return b
	}
	return out
}

// jsonText redacts the string values (and keys) of JSON text b, each
// decoded; it re-encodes only the strings that changed and leaves every
// other byte as it was.
func (r *Redactor) jsonText(b []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); {
		if b[i] != '"' {
			i++
			continue
		}
		k, escaped := i+1, false
		for k < len(b) && b[k] != '"' {
			if b[k] == '\\' {
				escaped = true
				k++
			}
			k++
		}
		if k >= len(b) {
			break // not JSON after all: an unterminated string
		}
		if enc, ok := r.jsonString(b[i:k+1], escaped); ok {
			out = append(append(out, b[last:i]...), enc...)
			last = k + 1
		}
		i = k + 1
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// jsonString redacts one JSON string literal (quotes included); ok is
// false when nothing in it changed.
func (r *Redactor) jsonString(lit []byte, escaped bool) ([]byte, bool) {
	raw := lit[1 : len(lit)-1]
	if !escaped {
		if t, ch := r.text(raw); ch {
			return quote(t), true
		}
		return nil, false
	}
	if r.clean().has(lit) {
		return nil, false // a literal found clean below before
	}
	if !hidesKeyword(raw) && !r.mayHold(raw) {
		return nil, false // decoding cannot bring a keyword or a value out of it
	}
	var s string
	if json.Unmarshal(lit, &s) != nil {
		t, ch := r.text(raw)
		return append(append([]byte{'"'}, t...), '"'), ch
	}
	if t, ch := r.text([]byte(s)); ch {
		return quote(t), true
	}
	// lit is a JSON text (it decoded) that Bytes leaves unchanged: the
	// transcript repeats its largest strings (the system prompt).
	r.clean().add(lit)
	return nil, false
}

// quote encodes s as a JSON string, without escaping <, > and &.
func quote(s []byte) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(string(s))
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// text redacts plain text: r's values, then every rule's secrets. The
// rules run on a view of b in which JSON-style escapes (\n, \t, \", \\,
// \u2028, …) are blanked to spaces of the same length, so a token written
// after one is at a word boundary, and the spans they find are replaced
// in b itself.
func (r *Redactor) text(b []byte) ([]byte, bool) {
	changed := false
	if r != nil {
		for _, v := range r.values {
			if bytes.Contains(b, v) {
				b = bytes.ReplaceAll(b, v, []byte(Mark))
				changed = true
			}
		}
	}
	if shapeClean.has(b) {
		return b, changed
	}
	set := rules()
	active, windows := set.active(b)
	if len(active) == 0 {
		shapeClean.add(b)
		return b, changed
	}
	view := blankEscapes(b)
	if !sameStart(view, b) {
		active, windows = set.active(view)
	}
	whole := [][2]int{{0, len(view)}}
	var spans [][2]int
	for _, i := range active {
		ru := set.rules[i]
		if !ru.mayMatch(view) {
			continue // view lacks what every match holds
		}
		on := whole
		if ru.assign {
			on = merge(windows)
		}
		for _, m := range ru.matches(view, on) {
			s, e := ru.secretSpan(m)
			for s < e && (view[s] == '\n' || view[s] == '\r') {
				s++
			}
			for e > s && (view[e-1] == '\n' || view[e-1] == '\r') {
				e--
			}
			if ru.keep(view, m, s, e) {
				spans = append(spans, [2]int{s, e})
			}
		}
	}
	if len(spans) == 0 {
		shapeClean.add(b)
		return b, changed
	}
	return replaceSpans(b, spans), true
}

// matches are the matches of r in the windows on of view, with indexes
// into view.
func (r *rule) matches(view []byte, on [][2]int) [][]int {
	var out [][]int
	for _, w := range on {
		for _, m := range r.regexp().FindAllSubmatchIndex(view[w[0]:w[1]], -1) {
			if r.wordStart && !atWordStart(view, m[0]+w[0]) {
				continue
			}
			for k := range m {
				if m[k] >= 0 {
					m[k] += w[0]
				}
			}
			out = append(out, m)
		}
	}
	return out
}

// merge sorts spans and joins those that overlap or touch.
func merge(spans [][2]int) [][2]int {
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	var out [][2]int
	for _, s := range spans {
		if n := len(out); n > 0 && s[0] <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], s[1])
			continue
		}
		out = append(out, s)
	}
	return out
}

// replaceSpans replaces each span of b (overlapping ones merged) with Mark.
func replaceSpans(b []byte, spans [][2]int) []byte {
	out := make([]byte, 0, len(b))
	last := 0
	for _, s := range merge(spans) {
		out = append(append(out, b[last:s[0]]...), Mark...)
		last = s[1]
	}
	return append(out, b[last:]...)
}

// blankEscapes is b with every JSON-style escape, after any number of
// backslashes (text escaped once or more), replaced by spaces; b itself
// when it has no backslash.
func blankEscapes(b []byte) []byte {
	if bytes.IndexByte(b, '\\') < 0 {
		return b
	}
	v := bytes.Clone(b)
	for i := 0; i < len(v); {
		if v[i] != '\\' {
			i++
			continue
		}
		j := i
		for j < len(v) && v[j] == '\\' {
			j++
		}
		n := 0 // the length of the escape after the backslashes
		if j < len(v) {
			switch v[j] {
			case 'n', 'r', 't', 'b', 'f', '"', '/', '\'':
				n = 1
			case 'u':
				if j+5 <= len(v) && isHex(v[j+1:j+5]) {
					n = 5
				}
			}
		}
		if n > 0 || j-i >= 2 {
			for k := i; k < j+n; k++ {
				v[k] = ' '
			}
		}
		i = j + n
	}
	return v
}

func isHex(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
