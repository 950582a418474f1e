// Command testreport turns `go test -json` into the output of a test run
// one can watch: go test's own package lines as each package ends (ok,
// FAIL, ?), the output of every failing test, a line at least every 30 s
// naming what is still running (and for how long), and at the end a line
// "test: FAILED pkg Test" for each failure and the plain summary line
// "test: N passed, N failed, N skipped". scripts/test.sh
// pipes go test into it:
//
//	go test -json ./... | go run ./scripts/testreport [-v]
//
// With -v every output line is printed as it comes (go test -v), and the
// end repeats the last lines of the first failed tests, which the
// interleaved output scattered, before the FAILED lines. It exits 1 when a
// test or a package failed, 0 otherwise. Lines on its input that
// are not JSON events pass through as they are.
//
// Lifecycle: one pass over standard input; a ticker prints the progress
// line while it reads.
package main

import (
	"os"
	"slices"
	"time"
)

func main() {
	os.Exit(run(os.Stdin, os.Stdout, slices.Contains(os.Args[1:], "-v"), 30*time.Second))
}
