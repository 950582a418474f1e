package flowerbin

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flowerhq/flower/internal/child"
	"github.com/flowerhq/flower/testkit/testbed"
)

// Terminal is a tmux session running one command, for tests that type into
// flower the way a person does and read the screen.
type Terminal struct {
	t    testing.TB
	sock string
}

// terminals counts the terminals this test process opened.
var terminals atomic.Int64

// NewTerminal runs command (a sh script) in a 150×40 tmux pane with exactly
// env, in dir. A missing tmux skips, or fails under FLOWER_REQUIRE_CLAUDE=1.
func NewTerminal(t testing.TB, env []string, dir, command string) *Terminal {
	t.Helper()
	return NewTerminalSized(t, env, dir, command, 150, 40)
}

// NewTerminalSized is NewTerminal in a pane of cols×rows.
func NewTerminalSized(t testing.TB, env []string, dir, command string, cols, rows int) *Terminal {
	t.Helper()
	testbed.RequireTool(t, "tmux", "scripts/test.sh installs it")
	envFile := filepath.Join(t.TempDir(), "env")
	var sb strings.Builder
	for _, kv := range env {
		sb.WriteString("export " + ShellQuote(kv) + "\n")
	}
	if err := os.WriteFile(envFile, []byte(sb.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	// The socket name carries the pid (test processes of other packages or
	// checkouts run at the same time) and a count of this process's
	// terminals (parallel tests number their temp dirs alike).
	term := &Terminal{t: t, sock: "flower-test-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(terminals.Add(1), 10)}
	// trap: Ctrl-C goes to the command, the pane's shell stays.
	script := "trap : INT; . " + envFile + "; cd " + dir + "; " + command + "; echo FLOWER-EXIT=$?; sleep 60"
	term.Tmux("new-session", "-d", "-s", "t", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows), "sh", "-c", script)
	t.Cleanup(func() {
		// The test's context has ended by now: the kill gets its own bound.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		child.Command(ctx, "tmux", "-L", term.sock, "kill-server").Run()
	})
	return term
}

// Tmux runs one tmux client command on the test's server, bounded by the
// test's deadline like every child of a test (testbed.Command).
func (term *Terminal) Tmux(args ...string) string {
	term.t.Helper()
	out, err := testbed.Command(term.t, "tmux", append([]string{"-L", term.sock}, args...)...).CombinedOutput()
	if err != nil {
		term.t.Fatalf("tmux %v: %v %s", args, err, out)
	}
	return string(out)
}

// Screen is what the pane shows now.
func (term *Terminal) Screen() string { return term.Tmux("capture-pane", "-t", "t", "-p") }

// Lines is everything the pane printed, its history too, with each line
// the program wrote whole: a line wider than the pane, which the terminal
// wrapped, comes back joined (-J).
func (term *Terminal) Lines() []string {
	return strings.Split(strings.TrimRight(term.Tmux("capture-pane", "-t", "t", "-p", "-J", "-S", "-"), "\n"), "\n")
}

// TypeLine types text, waits until the screen echoes it (the program has
// read it; an Enter sent earlier could land inside the same paste), then
// sends Enter.
func (term *Terminal) TypeLine(text string) {
	term.t.Helper()
	term.Tmux("send-keys", "-t", "t", text)
	term.WaitFor(text)
	term.Tmux("send-keys", "-t", "t", "Enter")
}

// Keys sends tmux key names (C-c, Enter, …).
func (term *Terminal) Keys(keys ...string) {
	term.Tmux(append([]string{"send-keys", "-t", "t"}, keys...)...)
}

// WaitFor polls the screen until it shows what, at most until the test's
// deadline (testbed.Deadline): a terminal offers no event to await, and a
// whole flow behind the screen can take minutes on a loaded machine.
func (term *Terminal) WaitFor(what string) string {
	term.t.Helper()
	var sc string
	if !testbed.Eventually(testbed.Left(term.t), func() bool { sc = term.Screen(); return strings.Contains(sc, what) }) {
		term.t.Fatalf("screen never showed %q:\n%s", what, sc)
	}
	return sc
}
