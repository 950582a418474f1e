// Package testbed runs the pinned, real Claude Code CLI against the scripted
// model for end-to-end tests.
//
// Lifecycle per test: New starts a scripted.Server on a free loopback port,
// makes a temporary HOME and workspace, and finds the pinned claude; the test
// runs claude through Bed.Command or Bed.Print, and flower or flower-hook
// (built once per test binary by BuildBinary) through Command, and asserts
// on Bed.Model.Requests() or on files; t.Cleanup stops the server and kills
// and reaps every child the test left running. Every child runs under
// Context(t): it is killed at the test's deadline (at most Cap), so a hang
// fails one test instead of waiting for the binary's timeout. Conditions
// without an event to wait on are polled with Await, never slept on. Main,
// called from the package's TestMain, removes the built binaries at the end.
// When the pinned claude is missing the test is skipped with a message naming
// the set-up script, unless FLOWER_REQUIRE_CLAUDE=1 (set by .ci/run), which
// turns the skip into a failure.
package testbed

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/internal/child"
	"github.com/flowerhq/flower/internal/pinned"
	"github.com/flowerhq/flower/scripted"
)

// Bed is one test's scripted model, HOME, workspace and claude.
type Bed struct {
	Model     *scripted.Server
	Home      string
	Workspace string
	Claude    string
	// Tmp is TMPDIR for claude and flower: claude leaves a folder per
	// workspace in $TMPDIR/claude-<uid>, which the bed's cleanup removes.
	// It is short (os.MkdirTemp, not t.TempDir), as Unix socket paths
	// under it must be.
	Tmp string
	t   testing.TB
}

// RepoRoot finds the module root by walking up from the working directory.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testbed: no go.mod above the working directory")
		}
		dir = parent
	}
}

// ClaudePath returns the pinned claude: $FLOWER_CLAUDE, else the copy that
// scripts/setup.sh installed in the checkout. It skips the test loudly when
// neither exists, and fails it when FLOWER_REQUIRE_CLAUDE=1. Under
// `go test -short` (the unit loop) it always skips: nothing spawns claude.
// A test that spawns claude lives in a *_e2e_test.go file: ClaudePath (and
// so New and NewFor) fails a caller whose test function sits in another
// file, in the unit loop too, so that the file name says what a test costs.
func ClaudePath(t testing.TB) string {
	t.Helper()
	if err := e2eFile(2); err != nil {
		t.Fatal(err)
	}
	if testing.Short() {
		t.Skip("e2e: -short is the unit loop, it runs no claude")
	}
	p := os.Getenv("FLOWER_CLAUDE")
	if p == "" {
		p = filepath.Join(RepoRoot(t), pinned.ClaudeRelPath)
	}
	if st, err := os.Stat(p); err == nil && !st.IsDir() {
		return p
	}
	msg := "testbed: the pinned claude " + pinned.ClaudeVersion + " is not at " + p +
		" — run scripts/setup.sh (it installs it into the checkout)"
	if os.Getenv("FLOWER_REQUIRE_CLAUDE") == "1" {
		t.Fatal(msg + " [FLOWER_REQUIRE_CLAUDE=1: not skipping]")
	}
	t.Skip("SKIPPING E2E: " + msg)
	return ""
}

// e2eFile checks that the outermost _test.go frame of the calling
// goroutine (the test, benchmark or fuzz function, or a subtest's closure
// inside it) is in a file named *_e2e_test.go. skip is runtime.Callers'.
func e2eFile(skip int) error {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(skip+1, pcs)])
	outer := ""
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.File, "_test.go") {
			outer = f.File
		}
		if !more {
			break
		}
	}
	switch {
	case outer == "":
		return errors.New("testbed: claude is spawned from no test file's goroutine; call ClaudePath or New from the test itself (in a *_e2e_test.go file)")
	case !strings.HasSuffix(outer, "_e2e_test.go"):
		return errors.New("testbed: " + filepath.Base(outer) + " spawns claude: move the test into a *_e2e_test.go file (the unit loop, go test -short, must know it by name)")
	}
	return nil
}

// RequireTool returns the path of the program name that a test needs
// besides claude (node, tmux, bash): it skips the test loudly without it,
// and fails it when FLOWER_REQUIRE_CLAUDE=1 (CI), so that nothing CI is
// meant to run is skipped there.
func RequireTool(t testing.TB, name, why string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	Unavailable(t, name+" is not on PATH ("+why+")")
	return ""
}

// Unavailable skips t loudly for something the machine lacks (a tool, root,
// a pty), and fails it when FLOWER_REQUIRE_CLAUDE=1 (CI), so that nothing
// CI is meant to prove is skipped there.
func Unavailable(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("FLOWER_REQUIRE_CLAUDE") == "1" {
		t.Fatal(msg + " [FLOWER_REQUIRE_CLAUDE=1: not skipping]")
	}
	t.Skip("SKIPPING: " + msg)
}

// New starts the scripted model for s and prepares HOME and workspace.
func New(t testing.TB, s *scripted.Script) *Bed {
	t.Helper()
	return NewFor(t, func(string) *scripted.Script { return s })
}

// NewFor is New for a script that needs the workspace's path (a tool call
// that names a file in it, say): mk gets the workspace.
func NewFor(t testing.TB, mk func(workspace string) *scripted.Script) *Bed {
	t.Helper()
	claude := ClaudePath(t)
	root := t.TempDir()
	b := &Bed{Home: filepath.Join(root, "home"), Workspace: filepath.Join(root, "ws"), Claude: claude, t: t}
	for _, d := range []string{b.Home, b.Workspace} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tmp, err := os.MkdirTemp("", "fbed-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	b.Tmp = tmp
	srv, err := scripted.Start(mk(b.Workspace), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	b.Model = srv
	return b
}

// BaseEnv is the environment claude runs with against a scripted model at
// url, with home as HOME (see scripted.OfflineEnv).
func BaseEnv(home, url string) []string { return scripted.OfflineEnv(os.Environ(), home, url) }

// Env is the environment for claude in this bed, with TMPDIR=b.Tmp.
func (b *Bed) Env() []string { return append(BaseEnv(b.Home, b.Model.URL()), "TMPDIR="+b.Tmp) }

// Command prepares claude ARGS in the workspace with the bed's environment
// as a contained child (internal/child: its own process group, killed with
// the test process and when ctx ends). Pass Context(t) as ctx; a shorter
// context works too. Like the children of Command, one the test started and
// never waited for is killed and reaped when the test ends.
func (b *Bed) Command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := child.Command(ctx, b.Claude, args...)
	cmd.Env = b.Env()
	cmd.Dir = b.Workspace
	contain(b.t, cmd)
	return cmd
}

// Run is a finished claude -p run.
type Run struct {
	Lines    []gjson.Result // every stdout line, parsed
	Result   gjson.Result   // the last "result" line
	ExitCode int
	Stdout   string
	Stderr   string
}

// OfType returns the lines whose "type" is typ (and "subtype" sub, if given).
func (r *Run) OfType(typ string, sub ...string) []gjson.Result {
	var out []gjson.Result
	for _, l := range r.Lines {
		if l.Get("type").String() != typ {
			continue
		}
		if len(sub) > 0 && l.Get("subtype").String() != sub[0] {
			continue
		}
		out = append(out, l)
	}
	return out
}

// Print runs `claude -p --output-format stream-json --verbose ARGS -- PROMPT`
// and waits for it (until Deadline(t)).
func (b *Bed) Print(t testing.TB, prompt string, args ...string) *Run {
	t.Helper()
	ctx := Context(t)
	full := append([]string{"-p", "--output-format", "stream-json", "--verbose"}, args...)
	full = append(full, "--", prompt)
	cmd := b.Command(ctx, full...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	run := &Run{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		run.ExitCode = ee.ExitCode()
	default:
		t.Fatalf("testbed: claude did not run: %v\nstderr: %s", err, stderr.String())
	}
	if ctx.Err() != nil {
		t.Fatalf("testbed: claude timed out\nstdout tail: %s\nstderr: %s", tail(run.Stdout, 2000), run.Stderr)
	}
	run.Lines, run.Result = ParseStream(stdout.Bytes())
	return run
}

// ParseStream parses stream-json output into lines and the last result line.
func ParseStream(out []byte) (lines []gjson.Result, result gjson.Result) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || !gjson.ValidBytes(line) {
			continue
		}
		l := gjson.ParseBytes(append([]byte(nil), line...))
		lines = append(lines, l)
		if l.Get("type").String() == "result" {
			result = l
		}
	}
	return lines, result
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

var (
	buildMu  sync.Mutex
	managed  bool // Main runs the tests and removes builtDir after them
	builtDir string
	built    = map[string]string{}
)

// HookBuildEnv is the environment flower-hook is built with, as
// scripts/setup.sh builds it. Static: with cgo, os/user (linked through
// mvdan.cc/sh's expand) makes it a dynamic binary, and the loader and libc
// start-up nearly double each hook's cost. Without the Green Tea garbage
// collector (GOEXPERIMENT=nogreenteagc, when the toolchain still has it):
// a hook never collects, and Green Tea's per-span mark bits fault in a
// page more for each new span, about 25 page faults of each start
// (docs/performance.md).
func HookBuildEnv() []string {
	env := []string{"CGO_ENABLED=0"}
	check := exec.Command("go", "env", "GOEXPERIMENT")
	check.Env = append(os.Environ(), "GOEXPERIMENT="+hookExperiment)
	if check.Run() == nil {
		env = append(env, "GOEXPERIMENT="+hookExperiment)
	}
	return env
}

// hookExperiment is the GOEXPERIMENT flower-hook is built with.
const hookExperiment = "nogreenteagc"

// BuildBinary builds the main package pkg (e.g. "./cmd/flower-hook") once per
// test process and returns the binary's path (flower-hook as
// scripts/setup.sh builds it: HookBuildEnv, with flower-hook-lite beside
// it). The binaries share one
// temporary folder that Main removes after the package's tests.
func BuildBinary(t testing.TB, pkg string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if !managed {
		t.Fatal("testbed: call testbed.Main from this package's TestMain, so the built binaries are removed after the tests")
	}
	if p, ok := built[pkg]; ok {
		return p
	}
	if builtDir == "" {
		d, err := os.MkdirTemp("", "flower-testbin-")
		if err != nil {
			t.Fatal(err)
		}
		builtDir = d
	}
	out := filepath.Join(builtDir, filepath.Base(pkg))
	cmd := child.Command(Context(t), "go", "build", "-o", out, pkg)
	cmd.Dir = RepoRoot(t)
	if filepath.Base(pkg) == "flower-hook" || filepath.Base(pkg) == "flower-hook-lite" {
		cmd.Env = append(cmd.Environ(), HookBuildEnv()...)
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("testbed: go build %s: %v\n%s", pkg, err, b)
	}
	built[pkg] = out
	if filepath.Base(pkg) == "flower-hook" {
		// As scripts/setup.sh installs it: flower-hook-lite beside
		// flower-hook, so that a step's PreToolUse guards ask the
		// Runtime (harness.liteBeside).
		buildMu.Unlock()
		BuildBinary(t, "./cmd/flower-hook-lite")
		buildMu.Lock()
	}
	return out
}
