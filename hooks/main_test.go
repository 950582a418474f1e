package hooks

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func runGuard(t *testing.T, args []string, stdin []byte, getenv func(string) string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	if getenv == nil {
		getenv = env(nil)
	}
	code = Run(args, bytes.NewReader(stdin), &out, &errb, getenv)
	return code, out.String(), errb.String()
}

const mainBash = `{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"make"},"tool_use_id":"t1"}`

func TestRunFailsClosedAndOpen(t *testing.T) {
	inputs := map[string][]byte{
		"empty": nil, "blank": []byte(" \n"), "truncated": []byte(`{"tool_name":"Bash","tool_in`), "array": []byte(`[1,2]`),
		"null": []byte("null"), "number": []byte("42"), "garbage": bytes.Repeat([]byte{0xff, '{', '"'}, 1<<20),
		"wrong types": []byte(`{"tool_name":7,"agent_id":[]}`),
		"no tool":     []byte(`{"hook_event_name":"PreToolUse","tool_input":{"command":"make"}}`),
		"empty tool":  []byte(`{"tool_name":""}`),
	}
	dir := t.TempDir()
	for name, in := range inputs {
		for _, g := range []struct {
			args     []string
			wantCode int
		}{
			{[]string{"delegate"}, ExitDeny},
			{[]string{"whitelist", "--allow", "Read"}, ExitDeny},
			{[]string{"fence", "--root", dir}, ExitDeny},
			{[]string{"spill", "--dir", dir}, ExitOK},
			{[]string{"index", "--dir", dir}, ExitOK},
			{[]string{"isolate", "--roles", "x"}, ExitOK},
		} {
			code, out, errs := runGuard(t, g.args, in, nil)
			if code != g.wantCode {
				t.Errorf("%s on %s: exit %d, want %d (stderr %q)", g.args[0], name, code, g.wantCode, errs)
			}
			if g.wantCode == ExitDeny && !strings.Contains(errs, "flower-hook "+g.args[0]+unreadableText) {
				t.Errorf("%s on %s: no reason on stderr: %q", g.args[0], name, errs)
			}
			if g.wantCode == ExitOK && strings.TrimSpace(out) != "{}" {
				t.Errorf("%s on %s: stdout %q, want {}", g.args[0], name, out)
			}
		}
	}
}

func TestRunBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want int
	}{
		{nil, ExitDeny},
		{[]string{"nope"}, ExitDeny},
		{[]string{"delegate", "--tools", "(("}, ExitDeny},
		{[]string{"delegate", "--bogus"}, ExitDeny},
		{[]string{"delegate", "stray"}, ExitDeny},
		{[]string{"whitelist", "--allow"}, ExitDeny},
		{[]string{"spill"}, ExitError},
		{[]string{"spill", "--dir", "x", "--threshold", "many"}, ExitError},
		{[]string{"index"}, ExitError},
		{[]string{"isolate", "--bogus"}, ExitError},
		{[]string{"--help"}, ExitOK},
	}
	for _, tt := range tests {
		if code, _, _ := runGuard(t, tt.args, []byte(mainBash), nil); code != tt.want {
			t.Errorf("%v: exit %d, want %d", tt.args, code, tt.want)
		}
	}
}

func TestRunDecisions(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		input string
		want  string // substring of stdout
	}{
		{"delegate denies main", []string{"delegate"}, mainBash, `"permissionDecision":"deny"`},
		{"delegate passes subagent", []string{"delegate"}, strings.Replace(mainBash, `"t1"`, `"t1","agent_id":"a9"`, 1), `{}`},
		{"delegate custom tools", []string{"delegate", "--tools", "Write"}, mainBash, `{}`},
		{"delegate glance", []string{"delegate", "--glance"}, strings.Replace(mainBash, "make", "git log -3", 1), `{}`},
		{"whitelist", []string{"whitelist", "--allow", "Read", "--role", "clarify"}, mainBash, WhitelistReason("clarify", "Bash")},
		{"isolate", []string{"isolate", "--roles", "w"}, `{"hook_event_name":"PreToolUse","tool_name":"Agent","tool_input":{"description":"d","prompt":"p","subagent_type":"w"}}`,
			`"updatedInput":{"description":"d","isolation":"worktree","prompt":"p","subagent_type":"w"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runGuard(t, tt.args, []byte(tt.input), nil)
			if code != ExitOK || !strings.Contains(out, tt.want) {
				t.Errorf("exit %d stdout %q stderr %q; want %q", code, out, errs, tt.want)
			}
			if !json.Valid([]byte(out)) {
				t.Errorf("stdout is not JSON: %q", out)
			}
		})
	}
}

func TestRunReportsToSocket(t *testing.T) {
	dir, err := os.MkdirTemp("", "fh")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	lines := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		sc := bufio.NewScanner(c)
		if sc.Scan() {
			lines <- sc.Text()
		}
	}()
	code, _, _ := runGuard(t, []string{"delegate"}, []byte(mainBash), env(map[string]string{SocketEnv: path}))
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	select {
	case line := <-lines:
		// A denial carries the reason the model was told (flower claude
		// prints it off a terminal; runs show lists it).
		want := `{"v":1,"kind":"guard","guard":"delegate","decision":"deny","tool":"Bash","tool_use_id":"t1","session_id":"s1","agent_id":"","detail":{"reason":` + jsonQuoted(DelegateReason("Bash"))
		if !strings.HasPrefix(line, want) || !strings.HasSuffix(line, `"}}`) {
			t.Errorf("report\n got %s\nwant %s", line, want)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("no report line")
	}
}

func TestDeadSocketNeitherSlowsNorChanges(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "stale.sock")
	if ln, err := net.Listen("unix", stale); err == nil {
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		ln.Close() // the file stays, nobody listens
	}
	for _, sockPath := range []string{"", filepath.Join(dir, "missing.sock"), stale, dir} {
		start := time.Now()
		code, out, _ := runGuard(t, []string{"delegate"}, []byte(mainBash), env(map[string]string{SocketEnv: sockPath}))
		if el := time.Since(start); el > reportTimeout+50*time.Millisecond {
			t.Errorf("socket %q: took %v", sockPath, el)
		}
		if code != ExitOK || !strings.Contains(out, `"deny"`) {
			t.Errorf("socket %q: exit %d out %q", sockPath, code, out)
		}
	}
	if err := sendReport(filepath.Join(dir, "missing.sock"), Report{}, reportTimeout); err == nil {
		t.Error("sendReport to a missing socket returned nil")
	}
}

func TestRunIsEphemeral(t *testing.T) {
	tests := []struct {
		args  []string
		stdin string
		want  int
	}{
		{[]string{"is-ephemeral", "--", "git status"}, "", ExitOK},
		{[]string{"is-ephemeral", "--", "git", "log", "-3"}, "", ExitOK},
		{[]string{"is-ephemeral", "--", "rm -rf /"}, "", ExitError},
		{[]string{"is-ephemeral", "ls"}, "", ExitOK},
		{[]string{"is-ephemeral", "--", "-"}, "ls | wc -l", ExitOK},
		{[]string{"is-ephemeral", "--", "-"}, "ls > x", ExitError},
		{[]string{"is-ephemeral"}, "", ExitDeny},
		{[]string{"is-ephemeral", "--"}, "", ExitDeny},
	}
	for _, tt := range tests {
		if code, _, _ := runGuard(t, tt.args, []byte(tt.stdin), nil); code != tt.want {
			t.Errorf("%v: exit %d, want %d", tt.args, code, tt.want)
		}
	}
}

// jsonQuoted is s as a JSON string, the way the report line carries it.
func jsonQuoted(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Fixed parts of the model-facing texts, for the external tests
// (package hooks_test): they match these, not the wording.
var (
	UnreadableText     = unreadableText
	FenceProtectedText = fenceProtectedText
	FenceOutsideText   = fenceOutsideText
	// SpillPointerLead is how every spill pointer starts.
	SpillPointerLead = spillPointerFormat[:strings.IndexByte(spillPointerFormat, '%')]
)
