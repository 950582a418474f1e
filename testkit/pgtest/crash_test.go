package pgtest

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flowerhq/flower/testkit/testbed"
)

// TestServerDiesWithACrashedTestBinary: a test binary that starts the
// cluster and is then killed (no TestMain cleanup runs) takes its postgres
// server with it; the control shows the server was running before the kill.
func TestServerDiesWithACrashedTestBinary(t *testing.T) {
	if os.Getenv("PGTEST_CRASH_CHILD") == "1" {
		URL(t)
		os.Stdout.WriteString(SocketDir() + "\n")
		<-t.Context().Done() // never: the parent kills this process
		return
	}
	URL(t) // skip or fail like every test without PostgreSQL
	cmd := testbed.Command(t, os.Args[0], "-test.run=^TestServerDiesWithACrashedTestBinary$")
	cmd.Env = append(os.Environ(), "PGTEST_CRASH_CHILD=1")
	out, _ := testbed.Start(t, cmd)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		t.Fatalf("the child printed no socket dir: %v", err)
	}
	dir := strings.TrimSpace(line)
	defer os.RemoveAll(dir)
	pidFile, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
	if err != nil {
		cmd.Process.Kill()
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.SplitN(string(pidFile), "\n", 2)[0])
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		cmd.Process.Kill()
		t.Fatalf("control: the child's postgres (pid %d) is not running", pid)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if !testbed.Eventually(20*time.Second, func() bool { return syscall.Kill(pid, 0) != nil }) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("postgres (pid %d) outlived its killed test binary", pid)
	}
}
