package child

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/flowerhq/flower/internal/await"
)

// shellWithSleep starts `sh -c 'sleep 30; touch marker'` and returns it
// with the pid of its sleep, once that runs.
func shellWithSleep(t *testing.T, marker string) (*exec.Cmd, int) {
	t.Helper()
	sh := Command(t.Context(), "sh", "-c", "sleep 30; touch "+marker)
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Signal(sh, syscall.SIGKILL); sh.Wait() })
	var kids []int
	await.True(t, 10*time.Second, "the shell's sleep", func() bool { kids = Descendants(sh.Process.Pid); return len(kids) == 1 })
	return sh, kids[0]
}

// TestFreezeThenKillLeavesNoGap: a tree listed child first (the sleep, then
// its shell) and killed with a pause between the signals (a preempted
// killer on a loaded machine) runs nothing more: the shell was stopped
// before its sleep died, so `touch marker` never runs. The control kills the
// same way without the stop pass, and the shell does run touch in the gap —
// the late marker TestFlowerStep_ToolTreeDiesWithFlower saw under load.
func TestFreezeThenKillLeavesNoGap(t *testing.T) {
	// The pause between signals is what is tested (a preempted killer), so
	// it is slept.
	pause := func() { time.Sleep(100 * time.Millisecond) }
	for _, c := range []struct {
		name   string
		kill   func(pids []int)
		marker bool
	}{
		{"freeze then kill", func(pids []int) { freezeThenKill(pids, pause) }, false},
		{"control: kill one by one", func(pids []int) {
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGKILL)
				pause()
			}
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "MARKER")
			sh, sleep := shellWithSleep(t, marker)
			c.kill([]int{sleep, sh.Process.Pid})
			sh.Wait()
			// A touch in flight lands before its process group is gone.
			await.True(t, 10*time.Second, "the end of the shell's process group", func() bool {
				return syscall.Kill(-sh.Process.Pid, 0) == syscall.ESRCH
			})
			if _, err := os.Stat(marker); (err == nil) != c.marker {
				t.Fatalf("marker exists = %v, want %v (sleep %d, shell %d)", err == nil, c.marker, sleep, sh.Process.Pid)
			}
		})
	}
}
