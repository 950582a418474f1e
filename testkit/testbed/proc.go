package testbed

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/flowerhq/flower/internal/await"
	"github.com/flowerhq/flower/internal/child"
)

// Cap bounds every child a test starts when the test binary's own deadline
// (go test -timeout) is further away or absent: a hang fails the test after
// Cap instead of waiting for the binary's timeout.
const Cap = 5 * time.Minute

// margin is left before the test binary's deadline, so a child that hangs
// is killed and reported before the binary panics on its timeout.
const margin = 30 * time.Second

// Deadline is when a child of t must have ended: Cap from now, or the test
// binary's deadline less a margin, whichever comes first.
func Deadline(t testing.TB) time.Time {
	d := time.Now().Add(Cap)
	if dt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if end, ok := dt.Deadline(); ok && end.Add(-margin).Before(d) {
			d = end.Add(-margin)
		}
	}
	return d
}

// Context is the context for the children of t: it ends at Deadline(t) or
// at the test's cleanup, whichever comes first. It is not t.Context(), which
// ends before any cleanup runs: a cleanup the test registered after starting
// a child (a graceful SIGTERM and Wait, say) runs before the child is
// killed.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithDeadline(context.Background(), Deadline(t))
	t.Cleanup(cancel)
	return ctx
}

// Command prepares the built binary bin (see BuildBinary; any program
// works) with args as a contained child of t: internal/child.Command under
// Context(t), so it runs in its own process group, the whole group is
// killed at the deadline or the test's end, and Wait gives up on pipes a
// grandchild still holds after child.WaitDelay. The test's cleanup kills
// and reaps a child that was started and never waited for, and fails the
// test if the deadline killed the child.
//
// The deadline counts from here, so call Command when the test runs: after
// t.Parallel(), never before it (a parallel test waits there for its turn).
// Only a child the deadline killed is reported: a child that ended in time
// is not, however long the test's cleanup waits afterwards (a parent test's
// cleanup runs after its parallel subtests, minutes later on a full suite).
func Command(t testing.TB, bin string, args ...string) *exec.Cmd {
	t.Helper()
	return command(t, Context(t), bin, args...)
}

// CommandWithin is Command with d in place of Cap: for a benchmark whose
// children (a fleet's workers) run longer than Cap on a loaded machine.
// The test binary's own deadline still bounds it.
func CommandWithin(t testing.TB, d time.Duration, bin string, args ...string) *exec.Cmd {
	t.Helper()
	end := time.Now().Add(d)
	if dt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if bd, ok := dt.Deadline(); ok && bd.Add(-margin).Before(end) {
			end = bd.Add(-margin)
		}
	}
	ctx, cancel := context.WithDeadline(context.Background(), end)
	t.Cleanup(cancel)
	return command(t, ctx, bin, args...)
}

// command is Command under ctx.
func command(t testing.TB, ctx context.Context, bin string, args ...string) *exec.Cmd {
	cmd := child.Command(ctx, bin, args...)
	contain(t, cmd)
	var killed atomic.Bool
	kill := cmd.Cancel
	cmd.Cancel = func() error { // os/exec calls it only while the child runs
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			killed.Store(true)
		}
		return kill()
	}
	t.Cleanup(func() {
		if killed.Load() {
			t.Errorf("testbed: %s ran into the test's deadline (at most testbed.Cap, %s) and was killed", cmd.Path, Cap)
		}
	})
	return cmd
}

// Start starts cmd (see Command) with its stdout a pipe for the test to
// read and its stderr collected; it fails the test when cmd cannot start.
func Start(t testing.TB, cmd *exec.Cmd) (stdout io.Reader, stderr *bytes.Buffer) {
	t.Helper()
	stderr = new(bytes.Buffer)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return out, stderr
}

// Exec runs cmd (see Command) to its end and returns what it printed and its
// exit code; it fails the test when cmd could not run at all.
func Exec(t testing.TB, cmd *exec.Cmd) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		t.Fatalf("%s: %v", cmd.Path, err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// contain registers the cleanup that kills and reaps a child of t that was
// started and never waited for.
func contain(t testing.TB, cmd *exec.Cmd) {
	t.Cleanup(func() {
		if cmd.Process != nil && cmd.ProcessState == nil {
			child.Signal(cmd, syscall.SIGKILL)
			cmd.Wait()
		}
	})
}

// Await polls cond until it holds and fails the test (naming what it
// awaited) when it does not hold by the test's deadline (Deadline: Cap from
// now at most). It is for conditions that must come and offer no event to
// wait on: a process gone, a file another process writes, a request the
// scripted model recorded, a terminal's screen. The bound is the test's,
// not a guess of how long the condition takes: on a loaded machine a flow
// step can take 20 s, and only a failing test pays for the wait.
func Await(t testing.TB, what string, cond func() bool) {
	t.Helper()
	AwaitWithin(t, Left(t), what, cond)
}

// Left is the time until Deadline(t): the bound of a wait for something
// that must come, where the test reports more than "it did not come".
func Left(t testing.TB) time.Duration { return time.Until(Deadline(t)) }

// AwaitWithin is Await bounded by timeout: where the bound is the claim (a
// claude stopped by the lease deadline, processes gone soon after a kill)
// or longer than Cap (a benchmark's whole fleet burst).
func AwaitWithin(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Eventually(timeout, cond) {
		t.Fatalf("testbed: %s did not happen within %s", what, timeout.Round(time.Second))
	}
}

// Eventually is Await without the test: it reports whether cond held
// within timeout (internal/await: it polls at once, then at intervals that
// double from 5 ms to 200 ms).
func Eventually(timeout time.Duration, cond func() bool) bool { return await.Eventually(timeout, cond) }

// Mentioning lists the live processes (pid → command line) whose command
// line contains s: a shell that would still touch a marker, wherever it was
// reparented to. Linux only (/proc); elsewhere it finds none.
func Mentioning(s string) map[int]string {
	out := map[int]string{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join(d, "cmdline"))
		line := strings.ReplaceAll(string(cmdline), "\x00", " ")
		if err != nil || !strings.Contains(line, s) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join(d, "stat")); err == nil && zombie(string(st)) {
			continue
		}
		out[pid] = line
	}
	return out
}

// zombie reports whether a /proc/<pid>/stat line is a zombie's.
func zombie(stat string) bool {
	i := strings.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// Main runs a package's tests (run is m.Run, or a wrapper such as
// pgtest.Main's) and then removes the binaries BuildBinary built. A package
// whose tests call BuildBinary calls it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testbed.Main(m.Run)) }
func Main(run func() int) int {
	buildMu.Lock()
	managed = true
	buildMu.Unlock()
	code := run()
	buildMu.Lock()
	defer buildMu.Unlock()
	if builtDir != "" {
		os.RemoveAll(builtDir)
		builtDir = ""
	}
	return code
}

// Descendants returns the live (non-zombie) processes below pid, children
// and their children, as pid → command name (/proc/<pid>/comm), from
// child.Descendants. Linux only; elsewhere it finds none.
func Descendants(pid int) map[int]string {
	out := map[int]string{}
	for _, n := range child.Descendants(pid) {
		comm, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(n), "comm"))
		if err == nil {
			out[n] = strings.TrimSpace(string(comm))
		}
	}
	return out
}

// GarblePages overwrites the first 64 bytes (a b-tree page header) of
// every 4 KiB page but the first of the SQLite file at path that holds
// marker, so SQLite finds those pages malformed when it reads them.
func GarblePages(t testing.TB, path, marker string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), marker) {
		t.Fatalf("testbed: %s does not hold %q (%v)", path, marker, err)
	}
	for page := 4096; page < len(data); page += 4096 {
		if strings.Contains(string(data[page:min(page+4096, len(data))]), marker) {
			copy(data[page:], strings.Repeat("\xde\xad\xbe\xef", 16))
		}
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// clockTick is the unit of the times in /proc/<pid>/stat (USER_HZ, 100 on
// every Linux a test runs on).
const clockTick = 10 * time.Millisecond

// TreeCPU is the processor time (user + system) pid and its live
// descendants have used, with their waited-for children's (cutime,
// cstime): what the tree has cost so far, from one scan of /proc. The
// difference of two calls is what it cost in between (a process that
// exited and was reaped inside the tree stays counted in its parent's
// cutime). 0 without /proc.
func TreeCPU(pid int) time.Duration {
	cpu := TreeCPUs(pid)
	var sum time.Duration
	for _, d := range cpu {
		sum += d
	}
	return sum
}

// TreeCPUs is TreeCPU per process: pid and each live descendant with its
// own time and its waited-for children's.
func TreeCPUs(pid int) map[int]time.Duration {
	out := map[int]time.Duration{}
	if d, ok := cpuOf(pid); ok {
		out[pid] = d
	}
	for _, n := range child.Descendants(pid) {
		if d, ok := cpuOf(n); ok {
			out[n] = d
		}
	}
	return out
}

// cpuOf reads utime+stime+cutime+cstime of /proc/<pid>/stat.
func cpuOf(pid int) (time.Duration, bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, false
	}
	return parseStatCPU(string(data))
}

// parseStatCPU sums fields 14–17 (utime, stime, cutime, cstime) of a
// /proc/<pid>/stat line; the command name, in parentheses, may hold spaces
// and parentheses itself.
func parseStatCPU(s string) (time.Duration, bool) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 15 {
		return 0, false
	}
	var ticks int64
	for _, v := range f[11:15] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, false
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, true
}

// MachineBusy is the processor time the whole machine has spent busy
// (user, nice, system, irq, softirq, steal of /proc/stat's cpu line) since
// boot, all cores summed: with TreeCPU over the same span it tells how much
// of the machine a measurement shared with others. 0 without /proc.
func MachineBusy() time.Duration {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		n, _ := strconv.ParseInt(f[i], 10, 64)
		ticks += n
	}
	return time.Duration(ticks) * clockTick
}
