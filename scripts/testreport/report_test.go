package main

import (
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowerhq/flower/testkit/testbed"
)

// stream is go test -json as test2json writes it for two packages: a pass,
// a skip, a parallel test that pauses and continues, and a failure.
func stream(t0 time.Time) []string {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	var out []string
	add := func(s int, action, pkg, test, output string) {
		b, _ := json.Marshal(event{Time: at(s), Action: action, Package: pkg, Test: test, Output: output})
		out = append(out, string(b))
	}
	const a, b = "github.com/flowerhq/flower/a", "github.com/flowerhq/flower/b"
	add(0, "start", a, "", "")
	add(0, "run", a, "TestOK", "")
	add(0, "output", a, "TestOK", "=== RUN   TestOK\n")
	add(1, "pass", a, "TestOK", "")
	add(1, "run", a, "TestPar", "")
	add(1, "pause", a, "TestPar", "")
	add(1, "run", a, "TestSkip", "")
	add(1, "skip", a, "TestSkip", "")
	add(2, "cont", a, "TestPar", "")
	add(3, "start", b, "", "")
	add(3, "run", b, "TestBad", "")
	add(3, "output", b, "TestBad", "    bad_test.go:9: want 2, got 3\n")
	add(4, "output", b, "TestBad", "--- FAIL: TestBad (1.00s)\n")
	add(4, "fail", b, "TestBad", "")
	add(4, "output", b, "", "FAIL\n")
	add(4, "output", b, "", "FAIL\tgithub.com/flowerhq/flower/b\t1.0s\n")
	add(4, "fail", b, "", "")
	add(5, "pass", a, "TestPar", "")
	add(5, "output", a, "", "PASS\n")
	add(5, "output", a, "", "ok  \tgithub.com/flowerhq/flower/a\t5.0s\n")
	add(5, "pass", a, "", "")
	return append(out, "# not JSON: passed through")
}

// TestReport: package lines as go test prints them, a failing test's
// output, lines that are not events, and the summary; exit 1 for the
// failure. The control: without the failing package the exit is 0.
func TestReport(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	got, code := reportOf(stream(t0), false, t0)
	for _, want := range []string{"ok  \tgithub.com/flowerhq/flower/a\t5.0s\n", "FAIL\tgithub.com/flowerhq/flower/b\t1.0s\n",
		"bad_test.go:9: want 2, got 3\n--- FAIL: TestBad", "# not JSON: passed through\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if !strings.HasSuffix(got, "\ntest: FAILED b TestBad\ntest: FAILED package b\ntest: 2 passed, 1 failed, 1 skipped\n") || code != 1 {
		t.Errorf("exit %d, output:\n%s", code, got)
	}
	if strings.Contains(got, "=== RUN") || strings.Contains(got, "PASS\n") {
		t.Errorf("a passing test's chatter is shown:\n%s", got)
	}
	var passing []string
	for _, l := range stream(t0) {
		if !strings.Contains(l, "flower/b") {
			passing = append(passing, l)
		}
	}
	if got, code := reportOf(passing, false, t0); code != 0 || strings.Contains(got, "FAILED") {
		t.Errorf("control: exit %d without the failure:\n%s", code, got)
	}
}

// reportOf is what the reporter prints for lines, and its exit code.
func reportOf(lines []string, verbose bool, t0 time.Time) (string, int) {
	var out strings.Builder
	r := newReport(&out, verbose, t0)
	for _, l := range lines {
		r.line(l)
	}
	code := r.finish()
	return out.String(), code
}

// TestVerboseRecap: under -v a failing test's lines are scattered among
// every other package's, so the end of the log repeats its last lines,
// after the last package line, and then names it beside the summary. The control: a test that
// passed is not repeated.
func TestVerboseRecap(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	got, _ := reportOf(stream(t0), true, t0)
	_, recap, _ := strings.Cut(got, "ok  \tgithub.com/flowerhq/flower/a\t5.0s\n")
	want := "test: the last lines of b TestBad:\n    bad_test.go:9: want 2, got 3\n--- FAIL: TestBad (1.00s)\n" +
		"test: FAILED b TestBad\ntest: FAILED package b\ntest: 2 passed, 1 failed, 1 skipped\n"
	if !strings.HasSuffix(recap, want) {
		t.Errorf("the end of the log lacks %q:\n%s", want, recap)
	}
	if strings.Contains(recap, "TestOK") || !strings.Contains(got, "=== RUN   TestOK") {
		t.Errorf("control: a passing test is repeated, or -v hid it:\n%s", got)
	}
}

// TestProgress: the progress line names the running tests with how long
// each has run, not a test paused by t.Parallel (waiting, not running),
// and a package between tests; with nothing running it says so.
func TestProgress(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lines := stream(t0)
	var out strings.Builder
	r := newReport(&out, false, t0)
	for _, l := range lines[:6] { // TestOK passed, TestPar paused
		r.line(l)
	}
	r.progress(t0.Add(40 * time.Second))
	if got := out.String(); !strings.Contains(got, "test: 40s: 1 passed, 0 failed so far; still running: a (between tests) (40s)") || strings.Contains(got, "TestPar") {
		t.Errorf("paused: %q", got)
	}
	out.Reset()
	for _, l := range lines[6:12] { // TestPar continued at 2 s, b's TestBad runs since 3 s
		r.line(l)
	}
	r.progress(t0.Add(62 * time.Second))
	if got, want := out.String(), "still running: a TestPar (1m0s), b TestBad (59s)\n"; !strings.HasSuffix(got, want) {
		t.Errorf("running: %q, want …%q", got, want)
	}
	out.Reset()
	newReport(&out, false, t0).progress(t0.Add(30 * time.Second))
	if got := out.String(); !strings.Contains(got, "building (no test running)") {
		t.Errorf("idle: %q", got)
	}
}

// TestRunTicks: run prints a progress line on its ticker while input is
// still coming, and the summary at its end.
func TestRunTicks(t *testing.T) {
	pr, pw := io.Pipe()
	var out syncBuilder
	done := make(chan int)
	go func() { done <- run(pr, &out, false, time.Millisecond) }()
	pw.Write([]byte(`{"Action":"start","Package":"p"}` + "\n"))
	testbed.Await(t, "a progress line", func() bool { return strings.Contains(out.String(), "still running: p (between tests)") })
	pw.Close()
	if code := <-done; code != 0 || !strings.HasSuffix(out.String(), "test: 0 passed, 0 failed, 0 skipped\n") {
		t.Errorf("exit %d:\n%s", code, out.String())
	}
}

// syncBuilder is a strings.Builder safe for the reporter's goroutine and
// the test's.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSubtestsEnd: the progress line drops a parent whose parallel
// subtests pause or continue (it waits for them) and a parallel subtest as
// its "--- PASS" line comes, though test2json holds its pass event until
// the parent ends — the stream as go test -json (Go 1.26) writes it for
// TestE2E_GuardsProveTheyAreLive's shape: an inline case with a subtest
// of its own, then two parallel ones. The control: without the result
// line the finished parallel case would still be shown.
func TestSubtestsEnd(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var out strings.Builder
	r := newReport(&out, false, t0)
	send := func(s int, action, test, output string) {
		b, _ := json.Marshal(event{Time: t0.Add(time.Duration(s) * time.Second), Action: action, Package: "p", Test: test, Output: output})
		r.line(string(b))
	}
	running := func(at int) string {
		out.Reset()
		r.progress(t0.Add(time.Duration(at) * time.Second))
		_, list, _ := strings.Cut(out.String(), "still running: ")
		return strings.TrimSpace(list)
	}
	send(0, "run", "TestP", "")
	send(0, "pause", "TestP", "")
	send(1, "cont", "TestP", "")
	send(1, "run", "TestP/slow", "")
	send(2, "run", "TestP/slow/inner", "")
	if got, want := running(30), "p TestP (29s), p TestP/slow (29s), p TestP/slow/inner (28s)"; got != want {
		t.Errorf("inline case running: %q, want %q", got, want)
	}
	send(40, "output", "TestP/slow/inner", "--- PASS: TestP/slow/inner (38.00s)\n")
	send(40, "pass", "TestP/slow/inner", "")
	send(60, "output", "TestP/slow", "--- PASS: TestP/slow (59.00s)\n")
	send(60, "pass", "TestP/slow", "")
	parallel := []string{"TestP/par1", "TestP/par2"}
	for _, name := range parallel { // as go test runs them: each pauses before the next starts
		send(70, "run", name, "")
		send(70, "pause", name, "")
	}
	if got, want := running(70), ""; got != want {
		t.Errorf("parallel cases waiting for a slot: %q, want nothing running (the parent waits for them)", got)
	}
	for _, name := range parallel {
		send(71, "cont", name, "")
	}
	if got, want := running(80), "p TestP/par1 (9s), p TestP/par2 (9s)"; got != want {
		t.Errorf("parallel cases: %q, want %q (the parent's function returned)", got, want)
	}
	send(85, "output", "TestP/par1", "    pass_test.go:9: a line that is not the end\n")
	send(85, "output", "TestP/par1", "--- PASS: TestP/par1 (14.00s)\n")
	if got, want := running(86), "p TestP/par2 (15s)"; got != want {
		t.Errorf("after par1's result line: %q, want %q", got, want)
	}
	send(90, "output", "TestP/par2", "--- FAIL: TestP/par2 (19.00s)\n")
	for _, name := range append(parallel, "TestP") {
		send(90, "pass", name, "")
	}
	if got := running(91); got != "" {
		t.Errorf("after the parent's end: %q", got)
	}
}

// TestEndLine: a test's own result line, as go test -json and -v (indented)
// write it; never another test's, a longer name's or a log line's.
func TestEndLine(t *testing.T) {
	for _, c := range []struct {
		output, test string
		want         bool
	}{
		{"--- PASS: TestA (1.00s)\n", "TestA", true},
		{"    --- SKIP: TestA/b (0.00s)\n", "TestA/b", true},
		{"--- FAIL: TestA (1.00s)\n", "TestA", true},
		{"--- PASS: TestAB (1.00s)\n", "TestA", false},
		{"--- PASS: TestA/b (1.00s)\n", "TestA", false},
		{"    x_test.go:3: --- PASS: TestA (1.00s)\n", "TestA", false},
		{"--- BENCH: TestA (1.00s)\n", "TestA", false},
		{"--- PA", "TestA", false},
	} {
		if got := endLine(c.output, c.test); got != c.want {
			t.Errorf("endLine(%q, %q) = %v", c.output, c.test, got)
		}
	}
}
