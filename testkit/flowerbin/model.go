package flowerbin

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/flowerhq/flower/testkit/testbed"
)

// Model is a `flower model serve` (or record) process of a test.
type Model struct {
	cmd    *exec.Cmd
	URL    string
	stderr *bytes.Buffer
}

// StartModel runs `flower model ARGS…` with env added to the environment
// and waits for its "listening on URL" line; the test's end interrupts it
// and waits for it to exit.
func StartModel(t testing.TB, flower string, env []string, args ...string) *Model {
	t.Helper()
	cmd := testbed.Command(t, flower, append([]string{"model"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, stderr := testbed.Start(t, cmd)
	m := &Model{cmd: cmd, stderr: stderr}
	t.Cleanup(func() { m.Stop(t) })
	line, err := bufio.NewReader(out).ReadString('\n')
	_, rest, ok := strings.Cut(strings.TrimSpace(line), " on ")
	url, _, _ := strings.Cut(rest, " ")
	if err != nil || !ok {
		t.Fatalf("flower model %s: no listening line (%q, %v); stderr: %s", strings.Join(args, " "), line, err, stderr.String())
	}
	m.URL = url
	return m
}

// Stop ends the server with SIGTERM and waits for it (idempotent).
func (m *Model) Stop(t testing.TB) {
	if m.cmd.ProcessState != nil {
		return
	}
	m.cmd.Process.Signal(syscall.SIGTERM)
	if err := m.cmd.Wait(); err != nil {
		t.Errorf("flower model: %v; stderr: %s", err, m.stderr.String())
	}
}

// Stderr is what the server printed on stderr so far.
func (m *Model) Stderr() string { return m.stderr.String() }
