//go:build linux

package child

import "os"
import "os/exec"
import "path/filepath"
import "strconv"
import "strings"
import "syscall"
import "testing"
import "time"

// TestMain makes the test binary the supervisor when asked (CHILD_SUPERVISE).
func TestMain(m *testing.M) {
	if os.Getenv("CHILD_SUPERVISE") != "" {
		os.Exit(Supervise(os.Args[1:], os.Stderr))
	}
	os.Exit(m.Run())
}

// superviseShell starts this test binary as the supervisor of sh -c script
// (with a lifeline) and returns it and the lifeline's write end.
func superviseShell(t *testing.T, script string) (*exec.Cmd, *os.File) {
	t.Helper()
	cmd := Command(t.Context(), os.Args[0], "sh", "-c", script)
	cmd.Env = append(os.Environ(), "CHILD_SUPERVISE=1")
	r, w, err := Lifeline(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	t.Cleanup(func() { w.Close(); Signal(cmd, syscall.SIGKILL); cmd.Wait() })
	return cmd, w
}

// readPID waits for a pid written to path.
func readPID(t *testing.T, path string) int {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		data, err := os.ReadFile(path)
		if pid, _ := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 0 {
			return pid
		}
	}
	t.Fatalf("no pid in %s", path)
	return 0
}

// gone waits (generously) for pid to be dead or a zombie.
func gone(pid int) bool {
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if _, state, ok := statOf(pid); !ok || state == 'Z' {
			return true
		}
	}
	return false
}

// TestSupervise_LifelineKillsTheTree: a grandchild in a process group and
// session of its own (setsid, as a tool escaping claude's group) dies once
// the lifeline closes, the supervisor with it; the control, with the
// lifeline held, keeps the grandchild alive.
func TestSupervise_LifelineKillsTheTree(t *testing.T) {
	for _, cut := range []bool{true, false} {
		t.Run(map[bool]string{true: "lifeline cut", false: "control"}[cut], func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pid")
			cmd, w := superviseShell(t, "setsid sh -c 'echo $$ > "+pidfile+"; exec sleep 300' & wait")
			tool := readPID(t, pidfile)
			if !cut {
				time.Sleep(500 * time.Millisecond)
				if _, state, ok := statOf(tool); !ok || state == 'Z' {
					t.Fatal("control: the tool died with the lifeline held")
				}
				return
			}
			w.Close()
			if !gone(tool) {
				t.Fatalf("the tool (pid %d) outlived the lifeline", tool)
			}
			err := cmd.Wait()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 137 {
				t.Errorf("supervisor ended with %v, want exit 137", err)
			}
		})
	}
}
