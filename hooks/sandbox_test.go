package hooks

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// rewritten decodes a sandboxed decision's command back into its words.
func rewritten(t *testing.T, d Decision) (words []string, fields map[string]any) {
	t.Helper()
	if d.Verdict != Allow || d.UpdatedInput == nil {
		t.Fatalf("not a sandbox rewrite: %+v", d)
	}
	if err := json.Unmarshal(d.UpdatedInput, &fields); err != nil {
		t.Fatal(err)
	}
	return strings.Fields(fields["command"].(string)), fields
}

// TestSandboxInputCarriesTheCommandAsOneWord: the model's text travels
// hex-escaped in one single-quoted word (Linux, bwrap run directly) or
// base64-encoded as one argv word of flower-hook sandbox (elsewhere):
// nothing of it is quoted into the new command, every other field stays,
// and it decodes back byte for byte. Control: a command without an object
// input is refused, so is one over the argv limit.
func TestSandboxInputCarriesTheCommandAsOneWord(t *testing.T) {
	hex := regexp.MustCompile(`^printf -v __flower_cmd %b '((?:\\x[0-9a-f]{2})*)' && `)
	direct := Sandboxing{Bwrap: "/usr/bin/bwrap", Bash: "/bin/bash"}
	viaHook := Sandboxing{HookBin: "/opt/my hook/flower-hook"}
	for _, cmd := range []string{"ls", `echo 'a'"b"$'\x2d' | cat`, "cat <<'EOF'\n$(x) `y`\nEOF", "echo ünï 🌼", "a\n\tb; c &"} {
		in := json.RawMessage(`{"command":` + jsonText(cmd) + `,"timeout":5000,"description":"d","run_in_background":false}`)
		for _, sb := range []Sandboxing{direct, viaHook} {
			out, err := sandboxInput(in, func(c string) (string, error) { return sb.Line(c, false) })
			if err != nil {
				t.Fatal(err)
			}
			var f map[string]any
			_ = json.Unmarshal(out, &f)
			line := f["command"].(string)
			if f["timeout"] != 5000.0 || f["description"] != "d" || f["run_in_background"] != false {
				t.Errorf("%q: fields lost: %s", cmd, out)
			}
			var back []byte
			if sb.Bwrap != "" {
				m := hex.FindStringSubmatch(line)
				if m == nil || !strings.Contains(line, ` -- /bin/bash -c "$__flower_cmd"`) {
					t.Fatalf("%q: rewritten to %s", cmd, line)
				}
				for _, h := range strings.Split(m[1], `\x`)[1:] {
					v, _ := strconv.ParseUint(h, 16, 8)
					back = append(back, byte(v))
				}
			} else {
				enc, ok := strings.CutPrefix(line, `'/opt/my hook/flower-hook' sandbox --cmd64 `)
				if !ok || strings.Trim(enc, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
					t.Fatalf("%q: rewritten to %s", cmd, line)
				}
				back, _ = base64.RawURLEncoding.DecodeString(enc)
			}
			if string(back) != cmd {
				t.Errorf("%q came back as %q", cmd, back)
			}
		}
	}
	line := func(c string) (string, error) { return direct.Line(c, false) }
	if _, err := sandboxInput(json.RawMessage(`"ls"`), line); err == nil {
		t.Error("control: a string input was rewritten")
	}
	if _, err := sandboxInput(json.RawMessage(`{"command":"`+strings.Repeat("x", maxCmd64)+`"}`), line); err == nil {
		t.Error("a command over the argv limit was rewritten")
	}
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestSandboxedGuards: with --sandbox the coordinator's glance and a
// read-only role's glance are rewritten into the sandbox, a can-run judge's
// Bash gets the scratch, anything the classifier refuses is still denied
// (unless the test-only unclassified mode), subagents pass untouched.
// Control: without --sandbox a glance passes as before, unrewritten.
func TestSandboxedGuards(t *testing.T) {
	all, _ := toolMatcher(DefaultDelegateTools)
	sb := Sandboxing{On: true, HookBin: "/bin/flower-hook"} // the subcommand form: its words are easy to read
	bash := func(cmd string) Input { return Input{ToolName: "Bash", ToolInput: bashInput(cmd)} }
	words, _ := rewritten(t, delegateIn(bash("git status"), all, true, sb))
	if !slices.Equal(words[:3], []string{"/bin/flower-hook", "sandbox", "--cmd64"}) {
		t.Errorf("glance rewritten to %q", words)
	}
	if d := delegateIn(bash("touch x"), all, true, sb); d.Verdict != Deny {
		t.Errorf("a write passed: %+v", d)
	}
	un := sb
	un.Unclassified = true
	rewritten(t, delegateIn(bash("touch x"), all, true, un))
	sub := bash("touch x")
	sub.AgentID = "a1"
	if d := delegateIn(sub, all, true, sb); d.Verdict != Pass || d.UpdatedInput != nil {
		t.Errorf("a subagent's Bash was touched: %+v", d)
	}
	if d := delegateIn(bash("git status"), all, true, Sandboxing{}); d.Verdict != Pass || d.UpdatedInput != nil {
		t.Errorf("control: without the sandbox a glance should pass unrewritten: %+v", d)
	}

	judge := []string{"Read", "Glob", "Grep"}
	rewritten(t, whitelistIn(bash("ls"), judge, "judge", true, sb))
	if d := whitelistIn(bash("ls"), judge, "judge", false, sb); d.Verdict != Deny {
		t.Errorf("a role without glance ran Bash: %+v", d)
	}
	if d := whitelistIn(bash("rm -rf ."), judge, "judge", true, sb); d.Verdict != Deny {
		t.Errorf("a judge's write passed: %+v", d)
	}
	words, _ = rewritten(t, whitelistIn(bash("go test ./..."), append(judge, "Bash"), "judge", true, sb))
	if !slices.Contains(words, "--scratch") {
		t.Errorf("a can-run judge's Bash has no scratch: %q", words)
	}
	if d := whitelistIn(Input{ToolName: "Write"}, judge, "judge", true, sb); d.Verdict != Deny {
		t.Errorf("Write passed: %+v", d)
	}
}

// TestBwrapArgs: the sandbox's shape, and the command as the last argv
// word of bash -c. A workspace under /tmp is bound back over the private
// /tmp, read-only. Control: one outside /tmp binds nothing back.
func TestBwrapArgs(t *testing.T) {
	cmd := "echo 'x' \"$y\"\n"
	a := bwrapArgs(cmd, sandboxOptions{Bash: "/bin/bash", Dir: "/tmp/TestX/001/ws/sub"})
	joined := strings.Join(a, " ")
	for _, want := range []string{"--ro-bind / / --dev-bind-try /dev/null /dev/null", "--dev-bind-try /dev/urandom /dev/urandom --proc /proc", "--tmpfs /tmp --ro-bind /tmp/TestX /tmp/TestX",
		"--unshare-pid", "--new-session", "--die-with-parent", "--cap-drop ALL", "--chdir /tmp/TestX/001/ws/sub"} {
		if !strings.Contains(joined, want) {
			t.Errorf("bwrap args lack %q: %q", want, a)
		}
	}
	if strings.Count(joined, "--dev-bind-try") != 3 || strings.Contains(joined, "--dev-bind /dev /dev") || strings.Contains(joined, "--dev /dev") {
		t.Errorf("/dev is not the host's with the three harmless nodes bound back: %q", a)
	}
	if !slices.Equal(a[len(a)-4:], []string{"--", "/bin/bash", "-c", cmd}) {
		t.Errorf("the command is not bash -c's own word: %q", a[len(a)-4:])
	}
	if strings.Contains(strings.Join(bwrapArgs("ls", sandboxOptions{Bash: "/bin/bash", Dir: "/work/ws"}), " "), "--ro-bind /work") {
		t.Error("control: a workspace outside /tmp was bound")
	}
	for dir, want := range map[string]string{"/tmp": "", "/tmp/": "", "/tmpx/a": "", "/tmp/a": "/tmp/a", "/tmp/a/b/../c": "/tmp/a", "/work": ""} {
		if got := tmpTop(dir); got != want {
			t.Errorf("tmpTop(%q) = %q, want %q", dir, got, want)
		}
	}
}

// TestSandboxEnv: the git keys that run programs are set after the
// caller's own GIT_CONFIG entries, GOTOOLCHAIN is local, rustup is pinned,
// GIT_EXTERNAL_DIFF is gone; the scratch moves caches into /tmp.
func TestSandboxEnv(t *testing.T) {
	env := sandboxEnv([]string{"PATH=/bin", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=me",
		"GIT_EXTERNAL_DIFF=touch x", "GOTOOLCHAIN=auto", "TMPDIR=/tmp/TestX/tmp"}, false, "stable-x86_64-unknown-linux-gnu")
	get := func(k string) (string, bool) {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v, true
			}
		}
		return "", false
	}
	keys := map[string]string{}
	n, _ := get("GIT_CONFIG_COUNT")
	for i := 0; i < len(gitNeutral)+1; i++ {
		k, _ := get("GIT_CONFIG_KEY_" + itoa(i))
		v, _ := get("GIT_CONFIG_VALUE_" + itoa(i))
		keys[k] = v
	}
	if n != itoa(len(gitNeutral)+1) || keys["user.name"] != "me" || keys["core.fsmonitor"] != "false" || keys["core.pager"] != "cat" ||
		keys["core.hooksPath"] != "/dev/null" || keys["gpg.program"] != "gpg" || keys["core.sshCommand"] != "ssh" {
		t.Errorf("git keys: count %s, %v", n, keys)
	}
	if _, ok := get("GIT_EXTERNAL_DIFF"); ok {
		t.Error("GIT_EXTERNAL_DIFF kept")
	}
	for k, want := range map[string]string{"GOTOOLCHAIN": "local", "RUSTUP_TOOLCHAIN": "stable-x86_64-unknown-linux-gnu", "TMPDIR": "/tmp", "PATH": "/bin"} {
		if v, _ := get(k); v != want {
			t.Errorf("%s = %q, want %q", k, v, want)
		}
	}
	if _, ok := get("GOCACHE"); ok {
		t.Error("control: a glance got the scratch caches")
	}
	env = sandboxEnv(nil, true, "")
	if v, _ := get("GOCACHE"); !strings.HasPrefix(v, "/tmp/") {
		t.Errorf("scratch GOCACHE = %q", v)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestTIOCSTIFilter: ten instructions for the arches flower-hook ships
// for, no jump past the end, the two returns last, the ioctl number and the two
// requests in place. Control: an unknown arch gets no filter (and the
// sandbox a new session instead).
func TestTIOCSTIFilter(t *testing.T) {
	for _, arch := range []string{"amd64", "arm64"} {
		p, ok := TIOCSTIFilter(arch)
		if !ok || len(p) != 10*8 {
			t.Fatalf("%s: %d bytes", arch, len(p))
		}
		for i := 0; i < 10; i++ {
			code, jt, jf := uint16(p[8*i])|uint16(p[8*i+1])<<8, int(p[8*i+2]), int(p[8*i+3])
			if code&0x07 == 0x05 && (i+1+jt > 9 || i+1+jf > 9) {
				t.Errorf("%s: jump %d lands on %d/%d, past the program", arch, i, i+1+jt, i+1+jf)
			}
			if (i >= 8) != (code == 0x06) {
				t.Errorf("%s: instruction %d is %#x: the returns are the last two", arch, i, code)
			}
		}
		if !strings.Contains(hexEscaped(p), `\x12\x54\x00\x00`) || !strings.Contains(hexEscaped(p), `\x1c\x54\x00\x00`) {
			t.Errorf("%s: TIOCSTI/TIOCLINUX missing", arch)
		}
	}
	if _, ok := TIOCSTIFilter("mips"); ok {
		t.Error("control: an unknown arch got a filter")
	}
	if a := strings.Join(bwrapArgs("ls", sandboxOptions{Bash: "/bin/bash", SeccompFD: 9}), " "); !strings.Contains(a, "--seccomp 9") || strings.Contains(a, "--new-session") {
		t.Errorf("with a filter: %s", a)
	}
}

// TestFilterFile: the filter's file is made private (0600 in a 0700
// folder) and found again unchanged; a file whose bytes were changed, a
// link planted under its name and a too-open file are replaced; a folder
// others may write is refused, as is a relative cache folder. The line
// opens the file for bwrap's --seccomp; without one it pipes the filter.
func TestFilterFile(t *testing.T) {
	prog, _ := TIOCSTIFilter("amd64")
	base := t.TempDir()
	cache := func() (string, error) { return base, nil }
	path, err := filterFile(prog, cache)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string) {
		t.Helper()
		got, err := os.ReadFile(path)
		st, _ := os.Lstat(path)
		dst, _ := os.Stat(filepath.Dir(path))
		if err != nil || !bytes.Equal(got, prog) || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 || dst.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %q %v %v", what, err, got, st.Mode(), dst.Mode())
		}
	}
	check("made")
	tamper := map[string]func(){
		"bytes changed": func() { _ = os.WriteFile(path, []byte("allow all"), 0o600) },
		"a planted link": func() {
			_ = os.Remove(path)
			_ = os.WriteFile(filepath.Join(base, "evil"), []byte("x"), 0o600)
			_ = os.Symlink(filepath.Join(base, "evil"), path)
		},
		"too open": func() { _ = os.Chmod(path, 0o666) },
	}
	for what, f := range tamper {
		f()
		again, err := filterFile(prog, cache)
		if err != nil || again != path {
			t.Fatalf("%s: %v %q", what, err, again)
		}
		check(what)
	}
	if again, err := filterFile(prog, cache); err != nil || again != path {
		t.Errorf("control: the same file should be found again: %v %q", err, again)
	}
	_ = os.Chmod(filepath.Dir(path), 0o777)
	if _, err := filterFile(prog, cache); err == nil {
		t.Error("a folder others may write was used")
	}
	if _, err := filterFile(prog, func() (string, error) { return "rel/cache", nil }); err == nil {
		t.Error("a relative cache folder was used")
	}

	sb := Sandboxing{Bwrap: "/usr/bin/bwrap", Bash: "/bin/bash", Filter: "/home/me/.cache/flower/seccomp-x.bpf"}
	if l, _ := sb.Line("ls", false); !strings.HasSuffix(l, ` "$__flower_cmd" 9</home/me/.cache/flower/seccomp-x.bpf`) || !strings.Contains(l, "--seccomp 9") {
		t.Errorf("with a file: %s", l)
	}
	sb.Filter = ""
	if l, _ := sb.Line("ls", false); !strings.Contains(l, ` "$__flower_cmd" 9< <(printf %b '\x20\x00`) {
		t.Errorf("control: without a file the filter is piped: %s", l)
	}
}
