package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Time       time.Time
	Action     string
	Package    string
	ImportPath string // build-output, build-fail
	Test       string
	Output     string
}

// report is the state of a run: what runs, what each running test said,
// and the counts.
type report struct {
	out     io.Writer
	verbose bool
	start   time.Time
	// running: package → test → when it started or continued (a test
	// paused by t.Parallel, waiting for its turn, is not running).
	running  map[string]map[string]time.Time
	pkgStart map[string]time.Time // packages started and not ended
	said     map[string][]string  // package+"\x00"+test → its output so far
	passed   int
	failed   int
	skipped  int
	// failures: each failed test and package in the order they failed,
	// with its last lines when -v interleaved them with everything else;
	// finish repeats them so the end of a log names what failed.
	failures []failure
}

// failure is one failed test or package (test empty) and, under -v, the
// last lines it said.
type failure struct {
	pkg, test string
	said      []string
}

// recapLines bounds the lines of one failure repeated at the end, and
// recapMax how many failures are repeated with their lines.
const recapLines, recapMax = 60, 5

// maxSaid bounds the output kept of one test (its last lines are shown).
const maxSaid = 500

func newReport(out io.Writer, verbose bool, now time.Time) *report {
	return &report{out: out, verbose: verbose, start: now, running: map[string]map[string]time.Time{},
		pkgStart: map[string]time.Time{}, said: map[string][]string{}}
}

// run reads go test -json from in until its end, printing to out, with a
// progress line every tick; it returns the exit code.
func run(in io.Reader, out io.Writer, verbose bool, tick time.Duration) int {
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	r := newReport(out, verbose, time.Now())
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return r.finish()
			}
			r.line(l)
		case now := <-ticker.C:
			r.progress(now)
		}
	}
}

// line handles one input line: an event, or text passed through.
func (r *report) line(l string) {
	var e event
	if !strings.HasPrefix(l, "{") || json.Unmarshal([]byte(l), &e) != nil || e.Action == "" {
		fmt.Fprintln(r.out, l)
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	if e.Test == "" {
		r.pkgEvent(e)
		return
	}
	r.testEvent(e)
}

// pkgEvent handles an event of a package as a whole.
func (r *report) pkgEvent(e event) {
	switch e.Action {
	case "start":
		r.pkgStart[e.Package] = e.Time
	case "build-output":
		fmt.Fprint(r.out, e.Output)
	case "output":
		if r.verbose || (e.Output != "PASS\n" && !strings.HasPrefix(e.Output, "=== ")) {
			fmt.Fprint(r.out, e.Output)
		}
	case "pass", "fail", "skip":
		delete(r.pkgStart, e.Package)
		delete(r.running, e.Package)
		if e.Action == "fail" {
			r.failures = append(r.failures, failure{pkg: e.Package})
		}
	}
}

// testEvent handles an event of one test.
func (r *report) testEvent(e event) {
	key := e.Package + "\x00" + e.Test
	switch e.Action {
	case "run", "cont":
		if r.running[e.Package] == nil {
			r.running[e.Package] = map[string]time.Time{}
		}
		if e.Action == "cont" {
			r.parentWaits(e.Package, e.Test)
		}
		r.running[e.Package][e.Test] = e.Time
	case "pause":
		delete(r.running[e.Package], e.Test)
		r.parentWaits(e.Package, e.Test)
	case "output":
		if r.verbose {
			fmt.Fprint(r.out, e.Output)
		}
		if endLine(e.Output, e.Test) {
			// test2json holds a parallel subtest's pass event until its
			// parent ends; the "--- PASS" line itself comes as it ends.
			r.ended(e.Package, e.Test)
		}
		if s := append(r.said[key], e.Output); len(s) > maxSaid {
			r.said[key] = s[len(s)-maxSaid:]
		} else {
			r.said[key] = s
		}
	case "pass", "fail", "skip":
		r.ended(e.Package, e.Test) // and its subtests: a parent ends after them
		switch e.Action {
		case "pass":
			r.passed++
		case "skip":
			r.skipped++
		case "fail":
			r.failed++
			f := failure{pkg: e.Package, test: e.Test}
			if r.verbose {
				f.said = r.said[key]
			} else {
				fmt.Fprint(r.out, strings.Join(r.said[key], ""))
			}
			r.failures = append(r.failures, f)
		}
		delete(r.said, key)
	}
}

// parentWaits drops test's parent from the running tests when test is a
// parallel subtest that pauses (waiting for a slot) or continues: either
// way its parent has started its cases and only waits for them now.
func (r *report) parentWaits(pkg, test string) {
	if i := strings.LastIndexByte(test, '/'); i > 0 {
		delete(r.running[pkg], test[:i])
	}
}

// ended drops test and its subtests from the running ones.
func (r *report) ended(pkg, test string) {
	for name := range r.running[pkg] {
		if name == test || strings.HasPrefix(name, test+"/") {
			delete(r.running[pkg], name)
		}
	}
}

// endLine reports whether output is test's result line ("--- PASS: test
// (1.00s)", FAIL or SKIP; indented under -v).
func endLine(output, test string) bool {
	rest, ok := strings.CutPrefix(strings.TrimLeft(output, " "), "--- ")
	if !ok || len(rest) < 6 {
		return false
	}
	switch rest[:6] {
	case "PASS: ", "FAIL: ", "SKIP: ":
		return strings.HasPrefix(rest[6:], test+" (")
	}
	return false
}

// progress prints what is still running, longest-running first.
func (r *report) progress(now time.Time) {
	type item struct {
		name  string
		since time.Time
	}
	var items []item
	for pkg, tests := range r.running {
		for test, since := range tests {
			items = append(items, item{short(pkg) + " " + test, since})
		}
	}
	for pkg, since := range r.pkgStart {
		if len(r.running[pkg]) == 0 {
			items = append(items, item{short(pkg) + " (between tests)", since})
		}
	}
	sort.Slice(items, func(i, j int) bool {
		if !items[i].since.Equal(items[j].since) {
			return items[i].since.Before(items[j].since)
		}
		return items[i].name < items[j].name
	})
	head := fmt.Sprintf("test: %s: %d passed, %d failed so far; ", round(now.Sub(r.start)), r.passed, r.failed)
	if len(items) == 0 {
		fmt.Fprintln(r.out, head+"building (no test running)")
		return
	}
	var names []string
	for i, it := range items {
		if i == 6 {
			names = append(names, fmt.Sprintf("and %d more", len(items)-i))
			break
		}
		names = append(names, fmt.Sprintf("%s (%s)", it.name, round(now.Sub(it.since))))
	}
	fmt.Fprintln(r.out, head+"still running: "+strings.Join(names, ", "))
}

// finish names what failed, prints the summary line and returns the exit
// code. Under -v the last lines of the first few failed tests, which the
// interleaved log scattered, come first; the names come last, beside the
// summary, where the shortest tail of a log still shows them.
func (r *report) finish() int {
	shown := 0
	for _, f := range r.failures {
		if len(f.said) > 0 && shown < recapMax {
			shown++
			fmt.Fprintf(r.out, "test: the last lines of %s %s:\n", short(f.pkg), f.test)
			fmt.Fprint(r.out, strings.Join(f.said[max(0, len(f.said)-recapLines):], ""))
		}
	}
	for _, f := range r.failures {
		if f.test == "" {
			fmt.Fprintf(r.out, "test: FAILED package %s\n", short(f.pkg))
		} else {
			fmt.Fprintf(r.out, "test: FAILED %s %s\n", short(f.pkg), f.test)
		}
	}
	fmt.Fprintf(r.out, "test: %d passed, %d failed, %d skipped\n", r.passed, r.failed, r.skipped)
	if len(r.failures) > 0 { // a failed test, or a package that failed to build or exit
		return 1
	}
	return 0
}

// short is a package path without the module's prefix.
func short(pkg string) string {
	return strings.TrimPrefix(pkg, "github.com/flowerhq/flower/")
}

func round(d time.Duration) time.Duration { return d.Round(time.Second) }
