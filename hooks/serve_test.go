package hooks

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/flowerhq/flower/internal/hooklite"
)

const testNonce = "0123456789abcdef0123456789abcdef"

// callLine is the hook call flower-hook-lite sends for argv (flower-hook's
// path first), env, cwd and input.
func callLine(argv, env []string, cwd, input string) []byte {
	join := func(l []string) string { return hex.EncodeToString([]byte(strings.Join(l, "\x00"))) }
	return []byte(hooklite.CallPrefix + testNonce + `","argv":"` + join(argv) + `","env":"` + join(env) +
		`","cwd":"` + hex.EncodeToString([]byte(cwd)) + `","input":"` + hex.EncodeToString([]byte(input)) + `"}`)
}

var answerRE = regexp.MustCompile(`^` + regexp.QuoteMeta(hooklite.AnswerPrefix+testNonce) + `","exit":(\d+),"stdout":"([0-9a-f]*)","stderr":"([0-9a-f]*)"}$`)

// parsedAnswer is an answer line's exit code, stdout and stderr.
func parsedAnswer(t *testing.T, line []byte) (code string, stdout, stderr string) {
	t.Helper()
	m := answerRE.FindSubmatch(line)
	if m == nil {
		t.Fatalf("not an answer: %s", line)
	}
	o, _ := hex.DecodeString(string(m[2]))
	e, _ := hex.DecodeString(string(m[3]))
	return string(m[1]), string(o), string(e)
}

const (
	bashMain = `{"session_id":"s","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"make test"},"tool_use_id":"t1"}`
	bashSub  = `{"session_id":"s","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","agent_id":"a1","tool_input":{"command":"make test"},"tool_use_id":"t2"}`
	lsMain   = `{"session_id":"s","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls -la"},"tool_use_id":"t3"}`
)

// TestAnswerMatchesRun: the decision server answers a call exactly as
// flower-hook (Run) does in the hook's process: exit code, stdout, stderr
// (the decisions' own tables are guards_test.go's and fence_test.go's).
func TestAnswerMatchesRun(t *testing.T) {
	ws := t.TempDir()
	write := func(p string) string {
		return `{"session_id":"s","cwd":"` + ws + `","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"` + p + `","content":"x"},"tool_use_id":"w"}`
	}
	cases := []struct {
		name  string
		args  []string
		input string
	}{
		{"delegate denies main Bash", []string{GuardDelegate}, bashMain},
		{"delegate passes a subagent", []string{GuardDelegate}, bashSub},
		{"delegate glance passes", []string{GuardDelegate, "--glance"}, lsMain},
		{"whitelist denies", []string{GuardWhitelist, "--allow", "Read", "--role", "r"}, bashMain},
		{"fence inside", []string{GuardFence, "--root", ws}, write(filepath.Join(ws, "a.txt"))},
		{"fence outside", []string{GuardFence, "--root", ws}, write("/etc/passwd")},
		{"fence project", []string{GuardFence, "--project"}, write(filepath.Join(ws, "b.txt"))},
		{"fence home inside", []string{GuardFence, "--root", ws}, write("~/c.txt")},
		{"isolate", []string{GuardIsolate, "--roles", "coder"}, `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Agent","tool_input":{"subagent_type":"coder","prompt":"p"}}`},
		{"unreadable input denies", []string{GuardDelegate}, `{"tool_name":`},
		{"bad flag denies", []string{GuardDelegate, "--nope"}, bashMain},
	}
	t.Setenv("HOME", ws) // flower-hook (Run) expands ~ with its own $HOME
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := []string{"HOME=" + ws, "PATH=" + os.Getenv("PATH"), "CLAUDE_PROJECT_DIR=" + ws}
			getenv := func(k string) string { return lookupEnv(env, k) }
			var out, errb bytes.Buffer
			want := Run(c.args, strings.NewReader(c.input), &out, &errb, getenv)
			code, stdout, stderr := parsedAnswer(t, Answer(callLine(append([]string{"/x/flower-hook"}, c.args...), env, ws, c.input), nil))
			if code != strconv.Itoa(want) || stdout != out.String() || stderr != errb.String() {
				t.Errorf("Answer: exit %s stdout %q stderr %q; Run: exit %d stdout %q stderr %q", code, stdout, stderr, want, out.String(), errb.String())
			}
		})
	}
}

// TestAnswerDeclines: anything but a well-formed call of a served guard is
// declined (flower-hook-lite then execs flower-hook); control: the
// well-formed call is answered.
func TestAnswerDeclines(t *testing.T) {
	good := callLine([]string{"/x/flower-hook", GuardDelegate}, nil, "/tmp", bashMain)
	if bytes.Equal(Answer(good, nil), decline) {
		t.Fatalf("control: the good call was declined")
	}
	for name, line := range map[string][]byte{
		"a report":       []byte(`{"v":1,"kind":"guard"}`),
		"spill":          callLine([]string{"/x/flower-hook", GuardSpill, "--dir", "/tmp"}, nil, "/tmp", bashMain),
		"index":          callLine([]string{"/x/flower-hook", GuardIndex, "--dir", "/tmp"}, nil, "/tmp", bashMain),
		"sandbox":        callLine([]string{"/x/flower-hook", guardSandbox, "--cmd64", "bHM"}, nil, "/tmp", ""),
		"is-ephemeral":   callLine([]string{"/x/flower-hook", GuardIsEphemeral, "--", "ls"}, nil, "/tmp", ""),
		"live":           callLine([]string{"/x/flower-hook", GuardLive}, nil, "/tmp", "{}"),
		"relative hook":  callLine([]string{"flower-hook", GuardDelegate}, nil, "/tmp", bashMain),
		"no guard":       callLine([]string{"/x/flower-hook"}, nil, "/tmp", bashMain),
		"short nonce":    bytes.Replace(good, []byte(testNonce), []byte("0123"), 1),
		"upper nonce":    bytes.Replace(good, []byte(testNonce), []byte(strings.ToUpper(testNonce)), 1),
		"trailing bytes": append(slices.Clone(good), ' '),
		"odd hex":        bytes.Replace(good, []byte(`","input":"`), []byte(`","input":"7`), 1),
		"fields swapped": bytes.Replace(good, []byte(`"env"`), []byte(`"cwd"`), 1),
	} {
		if got := Answer(line, nil); !bytes.Equal(got, decline) {
			t.Errorf("%s: answered %s", name, got)
		}
	}
}

// TestAnswerReadsOnlyForwardedEnv: the served guards read no environment
// variable but hooklite.ForwardEnv (all flower-hook-lite sends), whatever
// their flags: the sandbox rewrite, a git glance, fence --project.
// Control: the recorder sees the variables it should.
func TestAnswerReadsOnlyForwardedEnv(t *testing.T) {
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	read := map[string]bool{}
	getenv := func(k string) string {
		mu.Lock()
		read[k] = true
		mu.Unlock()
		return os.Getenv(k)
	}
	gitLog := `{"session_id":"s","cwd":"` + ws + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git log -1"},"tool_use_id":"g"}`
	write := `{"session_id":"s","cwd":"` + ws + `","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"` + ws + `/a","content":"x"},"tool_use_id":"w"}`
	for _, c := range []struct {
		args  []string
		input string
	}{
		{[]string{GuardDelegate, "--glance", "--sandbox"}, lsMain},
		{[]string{GuardDelegate, "--glance"}, gitLog},
		{[]string{GuardWhitelist, "--allow", "Read,Bash", "--glance", "--sandbox"}, gitLog},
		{[]string{GuardFence, "--project"}, write},
		{[]string{GuardIsolate, "--roles", "coder"}, bashMain},
	} {
		var out, errb bytes.Buffer
		run(c.args, strings.NewReader(c.input), &out, &errb, host{getenv: getenv, environ: []string{}, self: "/x/flower-hook", cwd: ws})
	}
	for k := range read {
		if k != SocketEnv && !slices.Contains(hooklite.ForwardEnv, k) {
			t.Errorf("a served guard read %s, which flower-hook-lite does not forward (add it to hooklite.ForwardEnv)", k)
		}
	}
	for _, k := range []string{"CLAUDE_PROJECT_DIR", "GIT_DIR", "PATH"} {
		if !read[k] {
			t.Errorf("control: %s was not read (read: %v)", k, read)
		}
	}
}

// BenchmarkAnswer is the decision server's CPU share of one
// flower-hook-lite call: delegate on a main-thread Bash call, as
// BenchmarkHookSpawn sends it (its report handed to a no-op).
func BenchmarkAnswer(b *testing.B) {
	var env []string
	for _, k := range hooklite.ForwardEnv {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	line := callLine([]string{"/x/flower-hook", GuardDelegate}, env, "/tmp", bashMain)
	for b.Loop() {
		if out := Answer(line, func([]byte) {}); !bytes.Contains(out, []byte(`"exit":0`)) {
			b.Fatalf("%s", out)
		}
	}
}

// TestAnswerExpandsTheHooksHome: the fence expands "~" with the hook's
// $HOME, not the flower process's. Control: with the hook's $HOME
// elsewhere, the same write is denied.
func TestAnswerExpandsTheHooksHome(t *testing.T) {
	ws, elsewhere := t.TempDir(), t.TempDir()
	t.Setenv("HOME", elsewhere)
	write := `{"session_id":"s","cwd":"` + ws + `","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"~/a.txt","content":"x"},"tool_use_id":"w"}`
	argv := []string{"/x/flower-hook", GuardFence, "--root", ws}
	if _, stdout, _ := parsedAnswer(t, Answer(callLine(argv, []string{"HOME=" + ws}, ws, write), nil)); strings.Contains(stdout, `"deny"`) {
		t.Errorf("~ under the hook's home was denied: %s", stdout)
	}
	if _, stdout, _ := parsedAnswer(t, Answer(callLine(argv, []string{"HOME=" + elsewhere}, ws, write), nil)); !strings.Contains(stdout, `"deny"`) {
		t.Errorf("control: ~ outside the roots passed: %s", stdout)
	}
}
