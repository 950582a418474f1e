package acceptance

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/flowerhq/flower/internal/demo"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/testkit/testbed"
)

// tempCase is one way a command ends early: the signal (0: stdout's pipe is
// closed), the exit code and the stderr words it must give, and whether
// $TMPDIR must be empty afterwards (false for the kill -9 control: nothing
// can clean up, so leftovers must show).
type tempCase struct {
	name  string
	sig   syscall.Signal
	code  int
	say   string
	clean bool
}

// flowerIn prepares flower args with $TMPDIR a fresh folder of its own
// (returned) and the pinned claude; FLOWER_SELFTEST_DELAY holds the
// self-test's canary step.
func flowerIn(t *testing.T, args ...string) (*exec.Cmd, string) {
	t.Helper()
	bed := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "unused", Replies: []scripted.Reply{{Text: "unused"}}}}})
	tmp := t.TempDir()
	cmd := testbed.Command(t, testbed.BuildBinary(t, "./cmd/flower"), args...)
	cmd.Env = append(flowerbin.Env(t, bed.Env(), bed.Claude), "TMPDIR="+tmp, "FLOWER_SELFTEST_DELAY=60s")
	cmd.Dir = bed.Workspace
	return cmd, tmp
}

// endsClean checks how cmd ended and what it left in tmp.
func endsClean(t *testing.T, cmd *exec.Cmd, tmp string, c tempCase, stderr *bytes.Buffer) {
	t.Helper()
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); c.sig != syscall.SIGKILL && code != c.code {
		t.Errorf("exit %d, want %d\n%s", code, c.code, stderr)
	}
	if !strings.Contains(stderr.String(), c.say) || strings.Contains(stderr.String(), "would not hold") || strings.Contains(stderr.String(), "self-test failed") {
		t.Errorf("stderr does not say %q (or blames the guards):\n%s", c.say, stderr)
	}
	left, _ := os.ReadDir(tmp)
	if c.clean && len(left) > 0 {
		t.Errorf("$TMPDIR holds %v afterwards", entryNames(left))
	}
	if !c.clean && len(left) == 0 {
		t.Errorf("control: kill -9 left nothing in $TMPDIR: the check could not see leftovers")
	}
}

func entryNames(es []os.DirEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// TestE2E_SignalDuringSelfTest: SIGINT or SIGTERM while the guard
// self-test's canary step runs (held by a scripted delay) ends `flower
// doctor` with 130 and "the guard self-test was interrupted", the first
// SIGINT already, never a failure of the guards, and $TMPDIR is empty
// afterwards (flower-selftest-*, its sockets and claude's own temp folders
// are gone). The same for the self-test of a flow's first step in a run
// dir. Control: kill -9 at the same point leaves them.
func TestE2E_SignalDuringSelfTest(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"doctor"}, {"--json", "--timeout", "0", "--run-dir", "runs", "-"}} {
		t.Run(map[bool]string{true: "doctor", false: "first step"}[args[0] == "doctor"], func(t *testing.T) {
			t.Parallel()
			signalDuringSelfTest(t, args)
		})
	}
}

func signalDuringSelfTest(t *testing.T, args []string) {
	for _, c := range []tempCase{
		{"SIGINT", syscall.SIGINT, 130, "the guard self-test was interrupted (interrupt signal received)", true},
		{"SIGTERM", syscall.SIGTERM, 130, "the guard self-test was interrupted (terminated signal received)", true},
		{"control: SIGKILL", syscall.SIGKILL, -1, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cmd, tmp := flowerIn(t, args...)
			cmd.Stdin = strings.NewReader(demo.Ask + "\n")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			canaryRuns := func() bool {
				m, _ := filepath.Glob(filepath.Join(tmp, "flower-selftest-*", "runs", "manifest.json"))
				data, _ := os.ReadFile(strings.Join(m, ""))
				return len(m) == 1 && bytes.Contains(data, []byte(`"running"`))
			}
			if !testbed.Eventually(testbed.Left(t), canaryRuns) {
				t.Fatalf("the canary step never ran\n%s%s", stdout.String(), stderr.String())
			}
			cmd.Process.Signal(c.sig)
			endsClean(t, cmd, tmp, c, &stderr)
		})
	}
}

// TestE2E_DemoEndsCleanEarly: `flower demo` whose stdout is a pipe closed
// after the first line (`flower demo | head -1`) stops with 141 and says
// stdout was closed; Ctrl-C after the first line ends it with 130; either
// way $TMPDIR is empty afterwards (flower-demo-*, the channel and report
// sockets, claude's own temp folders). Control: kill -9 leaves them.
func TestE2E_DemoEndsCleanEarly(t *testing.T) {
	t.Parallel()
	for _, c := range []tempCase{
		{"closed pipe", 0, 141, // flower's exit code for a closed stdout (README)
			"stdout was closed", true},
		{"SIGINT", syscall.SIGINT, 130, "interrupted", true},
		{"control: SIGKILL", syscall.SIGKILL, -1, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cmd, tmp := flowerIn(t, "demo", "--json=false")
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = w, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			w.Close()
			br := bufio.NewReader(r)
			if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, "flower demo") {
				t.Fatalf("first line %q, %v\n%s", line, err, stderr.String())
			}
			if c.sig == 0 {
				r.Close()
			} else {
				cmd.Process.Signal(c.sig)
				go br.WriteTo(new(bytes.Buffer)) // keep reading: only the signal ends it
				defer r.Close()
			}
			endsClean(t, cmd, tmp, c, &stderr)
		})
	}
}
