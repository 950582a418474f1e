package flowerbin

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/testkit/testbed"
)

// JSONLines parses every stdout line; a line that is not JSON fails the test.
func JSONLines(t testing.TB, out []byte) []gjson.Result {
	t.Helper()
	var lines []gjson.Result
	for i, l := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		if !json.Valid(l) {
			t.Fatalf("line %d is not JSON: %.200q", i+1, l)
		}
		lines = append(lines, gjson.ParseBytes(l))
	}
	if len(lines) == 0 {
		t.Fatal("no output")
	}
	return lines
}

// Output runs cmd to success and returns its stdout and stderr; a failure
// fails the test (what names the command) with stderr and the tail of
// stdout.
func Output(t testing.TB, cmd *exec.Cmd, what string) (stdout []byte, stderr string) {
	t.Helper()
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\nstderr: %s\nstdout tail: %s", what, err, errb.String(), Tail(out))
	}
	return out, errb.String()
}

// LastLine is the last line of b, surrounding space trimmed.
func LastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// Tail is the last 3000 bytes of b, for a failure message.
func Tail(b []byte) string {
	if len(b) > 3000 {
		return string(b[len(b)-3000:])
	}
	return string(b)
}

// ShellQuote quotes s for a POSIX shell (a tmux pane's sh, a script a test
// writes), never for a dangerous string: those go as argv.
func ShellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Step runs `flower step --role role --json ARGS…` in bed's workspace with
// claude as FLOWER_CLAUDE and env added, and returns what it printed
// (stdout and stderr) and its exit code.
func Step(t testing.TB, bed *testbed.Bed, claude, role string, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := testbed.Command(t, Flower(t), append([]string{"step", "--role", role, "--json"}, args...)...)
	cmd.Env = append(Env(t, bed.Env(), claude), env...)
	cmd.Dir = bed.Workspace
	out, _ := cmd.CombinedOutput()
	return string(out), cmd.ProcessState.ExitCode()
}

// NoJSONLine fails t when a line of out is a JSON object, or out redraws or
// colours (what flower prints into a pipe for people is plain lines).
func NoJSONLine(t testing.TB, what string, out []byte) {
	t.Helper()
	for _, l := range bytes.Split(out, []byte("\n")) {
		if l = bytes.TrimSpace(l); len(l) > 0 && l[0] == '{' && json.Valid(l) {
			t.Errorf("%s: a JSON line: %.200s", what, l)
		}
	}
	if bytes.ContainsAny(out, "\r\033") {
		t.Errorf("%s: piped output redraws or colours: %q", what, Tail(out))
	}
}
