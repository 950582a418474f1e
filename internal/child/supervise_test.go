//go:build linux

package child

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flowerhq/flower/internal/await"
)

// TestMain makes the test binary the supervisor when asked (CHILD_SUPERVISE).
func TestMain(m *testing.M) {
	if os.Getenv("CHILD_SUPERVISE") != "" && len(os.Args) > 1 && os.Args[1] == SuperviseArg {
		os.Exit(Supervise(os.Args[2:], os.Stderr))
	}
	os.Exit(m.Run())
}

// superviseShell starts this test binary as the supervisor of sh -c script
// (with a lifeline) in mode (ModeEnv) and returns it and the lifeline's
// write end.
func superviseShell(t *testing.T, mode, script string) (*exec.Cmd, *os.File) {
	t.Helper()
	cmd := Command(t.Context(), os.Args[0], SuperviseArg, "sh", "-c", script)
	cmd.Env = append(os.Environ(), "CHILD_SUPERVISE=1", ModeEnv+"="+mode)
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
	var pid int
	await.True(t, 30*time.Second, "a pid in "+path, func() bool {
		data, err := os.ReadFile(path)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil && pid > 0
	})
	return pid
}

// gone waits (generously) for pid to be dead or a zombie.
func gone(pid int) bool {
	return await.Eventually(10*time.Second, func() bool { _, state, ok := statOf(pid); return !ok || state == 'Z' })
}

// TestSupervise_LifelineKillsTheTree: in either mode, a grandchild in a
// process group and session of its own (setsid, as a tool escaping
// claude's group) dies once the lifeline closes, the supervisor with it;
// the control, with the lifeline held, keeps the grandchild alive.
func TestSupervise_LifelineKillsTheTree(t *testing.T) {
	for _, mode := range []string{"subreaper", "portable"} {
		for _, cut := range []bool{true, false} {
			t.Run(mode+"/"+map[bool]string{true: "lifeline cut", false: "control"}[cut], func(t *testing.T) {
				pidfile := filepath.Join(t.TempDir(), "pid")
				cmd, w := superviseShell(t, mode, "setsid sh -c 'echo $$ > "+pidfile+"; exec sleep 300' & wait")
				tool := readPID(t, pidfile)
				if !cut {
					time.Sleep(500 * time.Millisecond) // staying alive a while is what the control shows
					if _, state, ok := statOf(tool); !ok || state == 'Z' {
						t.Fatal("control: the tool died with the lifeline held")
					}
					return
				}
				w.Close()
				if !gone(tool) {
					t.Fatalf("the tool (pid %d) outlived the lifeline", tool)
				}
				wantExit(t, cmd, 137)
			})
		}
	}
}

// wantExit fails t unless cmd ends with exit code code.
func wantExit(t *testing.T, cmd *exec.Cmd, code int) {
	t.Helper()
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); (code == 0 && err != nil) || (code != 0 && (!ok || ee.ExitCode() != code)) {
		t.Errorf("supervisor ended with %v, want exit %d", err, code)
	}
}

// TestSupervise_PortableFindsOrphans: in the portable mode (no subreaper,
// no death signal, no /proc), a tool that left claude's group (setsid) and
// then lost its parent is reparented away from the supervisor (the proof
// that it is no subreaper) and is still killed, by the group the tracker
// saw it in: when the lifeline closes, and when the command exits on its
// own (the supervisor then ends as it did), and when flower, alive, kills
// the supervisor with Signal's SIGKILL. The control, with the lifeline held
// and the command running, keeps the orphan alive.
func TestSupervise_PortableFindsOrphans(t *testing.T) {
	for _, how := range []string{"lifeline cut", "command exits", "flower kills", "control"} {
		t.Run(how, func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pid")
			// The middle sh starts the tool in a session of its own and exits
			// after a second (the tracker lists the tree in between).
			middle := "sh -c \"setsid sh -c 'echo \\$\\$ > " + pidfile + "; exec sleep 300' & sleep 1\""
			end := map[bool]string{true: "sleep 3; exit 3", false: "exec sleep 300"}[how == "command exits"]
			cmd, w := superviseShell(t, "portable", middle+"; "+end)
			tool := readPID(t, pidfile)
			orphaned := await.Eventually(30*time.Second, func() bool {
				ppid, _, ok := statOf(tool)
				return ok && ppid != cmd.Process.Pid && !slices.Contains(Descendants(cmd.Process.Pid), tool)
			})
			if !orphaned {
				t.Fatalf("the tool (pid %d) never left the supervisor's tree: is the portable mode a subreaper?", tool)
			}
			switch how {
			case "control":
				time.Sleep(500 * time.Millisecond) // staying alive a while is what the control shows
				if _, state, ok := statOf(tool); !ok || state == 'Z' {
					t.Fatal("control: the orphan died with the lifeline held")
				}
				return
			case "lifeline cut":
				w.Close()
			case "flower kills":
				Signal(cmd, syscall.SIGKILL)
			}
			if !gone(tool) {
				t.Fatalf("the orphan (pid %d) outlived the supervisor's kill (%s)", tool, how)
			}
			wantExit(t, cmd, map[string]int{"lifeline cut": 137, "command exits": 3, "flower kills": 137}[how])
		})
	}
}
