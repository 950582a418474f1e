// Package textclip cuts text to a length without splitting a character: the
// one copy of the clipping that previews, summaries, log lines and status
// lines need.
//
// Lifecycle: stateless; plain functions, safe for concurrent use. A leaf: it
// imports nothing of this module, so the static flower-hook can use it.
package textclip

import (
	"strings"
	"unicode/utf8"
)

// Ellipsis is what Mark and Bytes append to a cut text.
const Ellipsis = "…"

// Runes returns the first n characters (runes) of s, or s when it is no
// longer. n < 0 counts as 0.
func Runes(s string, n int) string {
	i := 0
	for j := range s {
		if i >= n {
			return s[:j]
		}
		i++
	}
	return s
}

// Mark is Runes with Ellipsis appended when s was cut.
func Mark(s string, n int) string {
	if c := Runes(s, n); len(c) < len(s) {
		return c + Ellipsis
	}
	return s
}

// Boundary returns the largest cut ≤ n that does not split a UTF-8
// character of s (len(s) when s is no longer than n). It is 0 only when n
// is 0 or the first character is longer than n bytes.
func Boundary(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	if n < 0 {
		return 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// Bytes folds runs of white space to one space and cuts the result to at
// most n bytes on a character boundary, with Ellipsis appended when cut (a
// one-line preview for a log).
func Bytes(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:Boundary(s, n)] + Ellipsis
}
