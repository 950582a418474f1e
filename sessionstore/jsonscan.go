package sessionstore

import (
	"strings"

	"github.com/tidwall/gjson"
)

// A minimal walker over JSON text that is already known to be valid (every
// stored entry was validated on append). Unlike gjson it never decodes a
// string value it only steps over: the scan pass visits megabytes of tool
// output and needs just their extent, and decoding them would allocate a
// copy of each.

// members calls f for each member of the object obj with the raw key text
// (without quotes; object keys in transcripts carry no escapes) and the raw
// value; it stops when f returns false.
func members(obj string, f func(key, val string) bool) {
	items(obj, '{', '}', func(i int) (int, bool) {
		if obj[i] != '"' {
			return i, false
		}
		kend := skipString(obj, i)
		v := skipSpace(obj, kend)
		if v >= len(obj) || obj[v] != ':' {
			return v, false
		}
		v = skipSpace(obj, v+1)
		vend := skipValue(obj, v)
		return vend, f(obj[i+1:kend-1], obj[v:vend])
	})
}

// member is the raw value of the first member key of the object obj, ""
// when it has none.
func member(obj, key string) (val string) {
	members(obj, func(k, v string) bool {
		if k == key {
			val = v
			return false
		}
		return true
	})
	return val
}

// elements calls f for each element of the array arr.
func elements(arr string, f func(val string) bool) {
	items(arr, '[', ']', func(i int) (int, bool) {
		vend := skipValue(arr, i)
		return vend, f(arr[i:vend])
	})
}

// items walks the items of the first open…shut container in s: item gets
// where one starts and returns where it ends and whether to go on.
func items(s string, open, shut byte, item func(i int) (end int, more bool)) {
	i := strings.IndexByte(s, open)
	if i < 0 {
		return
	}
	i++
	for {
		i = skipSpace(s, i)
		if i >= len(s) || s[i] == shut {
			return
		}
		end, more := item(i)
		if !more {
			return
		}
		i = skipSpace(s, end)
		if i < len(s) && s[i] == ',' {
			i++
		}
	}
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string literal at s[i].
func skipString(s string, i int) int {
	j := i + 1
	for {
		k := strings.IndexByte(s[j:], '"')
		if k < 0 {
			return len(s)
		}
		j += k
		bs := 0
		for b := j - 1; b > i && s[b] == '\\'; b-- {
			bs++
		}
		if bs%2 == 0 {
			return j + 1
		}
		j++
	}
}

// skipValue returns the index just past the value at s[i].
func skipValue(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '"':
		return skipString(s, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '"':
				j = skipString(s, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(s)
	default: // number, true, false, null
		j := i
		for j < len(s) && s[j] != ',' && s[j] != '}' && s[j] != ']' && s[j] != ' ' && s[j] != '\n' {
			j++
		}
		return j
	}
}

// str decodes a raw string value ("" for anything else); without escapes it
// is a view into raw, so callers that keep it must copy it.
func str(raw string) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	if strings.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1]
	}
	return gjson.Parse(raw).Str
}
