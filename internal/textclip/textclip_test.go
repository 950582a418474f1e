package textclip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRunesAndMark(t *testing.T) {
	for _, tc := range []struct {
		s           string
		n           int
		runes, mark string
	}{
		{"", 3, "", ""},
		{"abc", 3, "abc", "abc"},
		{"abcd", 3, "abc", "abc…"},
		{"交接文档", 2, "交接", "交接…"},
		{"交接", 2, "交接", "交接"},
		{"a交b", 0, "", "…"},
		{"a交b", -1, "", "…"},
		{"🌸🌸🌸", 1, "🌸", "🌸…"},
	} {
		if got := Runes(tc.s, tc.n); got != tc.runes {
			t.Errorf("Runes(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.runes)
		}
		if got := Mark(tc.s, tc.n); got != tc.mark {
			t.Errorf("Mark(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.mark)
		}
	}
}

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"  a \n\t b  ", 10, "a b"},
		{"abcdef", 3, "abc…"},
		{"交接", 4, "交…"}, // 交 is 3 bytes: 4 would split 接
		{"交接", 2, "…"},
		{"交接", 6, "交接"},
	} {
		got := Bytes(tc.s, tc.n)
		if got != tc.want {
			t.Errorf("Bytes(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
		if !utf8.ValidString(got) || len(strings.TrimSuffix(got, Ellipsis)) > tc.n {
			t.Errorf("Bytes(%q, %d) = %q: split a character or too long", tc.s, tc.n, got)
		}
	}
}

func TestBoundary(t *testing.T) {
	s := "a交b" // a=1 byte, 交=3 bytes
	for n, want := range map[int]int{0: 0, 1: 1, 2: 1, 3: 1, 4: 4, 5: 5, 9: 5, -2: 0} {
		if got := Boundary(s, n); got != want {
			t.Errorf("Boundary(%q, %d) = %d, want %d", s, n, got, want)
		}
	}
}
