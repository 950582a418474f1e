// Package lazyre compiles a regular expression the first time it is used.
// flower starts once per step (and flower-hook once per tool call), and a
// package-level regexp.MustCompile runs at every start whether the pattern
// is needed or not.
//
// Lifecycle: none; New returns a function that compiles on its first call
// (once, safe for concurrent use) and returns the same *regexp.Regexp after.
package lazyre

import (
	"regexp"
	"sync"
)

// New returns the compiled expr on first call; it panics then, as
// regexp.MustCompile does, if expr does not parse.
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
