package hooks_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/flowerhq/flower/hooks"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// sandboxLine is the command line a sandboxed Bash call of cmd is
// rewritten to (what claude's shell then runs).
func sandboxLine(t testing.TB, hook, cmd string, scratch bool) string {
	t.Helper()
	in, _ := json.Marshal(map[string]string{"command": cmd, "description": "d"})
	args := `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":` + string(in) + `}`
	c := testbed.Command(t, hook, "delegate", "--glance", "--sandbox", "--unclassified")
	c.Stdin = strings.NewReader(args)
	// The hook keeps the seccomp filter's file in the cache folder: the
	// test's own, not the user's.
	c.Env = append(os.Environ(), "XDG_CACHE_HOME="+filterCache(t))
	out, err := c.Output()
	if err != nil {
		t.Fatalf("flower-hook delegate: %v", err)
	}
	var d struct {
		HookSpecificOutput struct{ UpdatedInput json.RawMessage }
	}
	if err := json.Unmarshal(out, &d); err != nil || d.HookSpecificOutput.UpdatedInput == nil {
		t.Fatalf("flower-hook delegate answered %s (%v)", out, err)
	}
	out = d.HookSpecificOutput.UpdatedInput
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Command string }
	if err := json.Unmarshal(out, &f); err != nil {
		t.Fatal(err)
	}
	return f.Command
}

var (
	filterCacheOnce sync.Once
	filterCacheDir  string
)

// filterCache is the cache folder the tests' flower-hook keeps its seccomp
// filter in: one for the test binary, removed after every test ran
// (TestMain), so that the file outlives each line a test built.
func filterCache(t testing.TB) string {
	t.Helper()
	filterCacheOnce.Do(func() {
		filterCacheDir, _ = os.MkdirTemp("", "flower-hooks-cache-")
	})
	if filterCacheDir == "" {
		t.Fatal("no temp folder for the cache")
	}
	return filterCacheDir
}

// requireSandbox skips (fails under FLOWER_REQUIRE_CLAUDE=1) without a
// working bubblewrap.
func requireSandbox(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("the sandbox's e2e tests run bwrap hundreds of times: not in -short")
	}
	testbed.RequireTool(t, "bwrap", "the read-only sandbox")
	if err := hooks.SandboxCheck(); err != nil {
		t.Fatal(err)
	}
}

// diffAtoms are the texts the differential commands carry: quotes of both
// kinds, backslashes, newlines, tabs, unicode, shell metacharacters.
var diffAtoms = []string{
	"plain", "with space", "it's", `"dq"`, `back\slash`, "ünïcödé 🌼 中文 ça", "tab\there", "new\nline", "$dollar", "${brace}",
	"`tick`", "*glob*", "semi;colon", "pipe|bar", "amp&", "brace{a,b}", "~tilde", "!bang", "#hash", "%percent%s",
	`\x2d\n`, "-n", "--", "a'b\"c", "  lead", "trail  ", "", "\\\n", "EOF", "x=1", "<redir>", "(paren)", "[a-z]", "ÀÉÎ", "😀😀",
	"\u200bzero-width", "ω≠∞", "a\r\nb", "$'ansi'", "100%",
}

// sq single-quotes s for bash (for the test's own command texts).
func sq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// ansiC writes s as a bash $'…' word with every byte escaped.
func ansiC(s string) string {
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, `\x%02x`, s[i])
	}
	return b.String() + "'"
}

// diffCommands are the differential test's read commands: every atom in
// fifteen forms (printf, echo, here-docs quoted and not, $'…', pipes,
// subshells with an exit code, stderr, case, parameter lengths).
func diffCommands() []string {
	forms := []func(string) string{
		func(a string) string { return "printf '%s\\n' " + sq(a) },
		func(a string) string { return "echo " + sq(a) + " | cat -A" },
		func(a string) string { return "cat <<'EOF_X'\n" + a + "\nEOF_X" },
		func(a string) string {
			return "cat <<EOF_X | wc -c\n" + strings.NewReplacer(`\`, `\\`, "$", `\$`, "`", "\\`").Replace(a) + "\nEOF_X"
		},
		func(a string) string { return "printf '%s' " + ansiC(a) + " | od -c | head -5" },
		func(a string) string { return "printf '%q\\n' " + sq(a) },
		func(a string) string { return "echo " + sq(a) + " | tr a-z A-Z | sort | uniq -c" },
		func(a string) string { return "x=" + sq(a) + "; echo \"${#x}:${x}\"" },
		func(a string) string { return "(printf '%s' " + sq(a) + "; exit 3)" },
		func(a string) string { return "echo " + sq(a) + " >&2; echo out" },
		func(a string) string { return "case " + sq(a) + " in *a*) echo A;; *) echo N;; esac" },
		func(a string) string { return "{ echo " + sq(a) + "; ls -1; } | grep -c ." },
		func(a string) string { return "grep -F -c -- " + sq(a) + " data.txt || echo none" },
		func(a string) string { return "printf '%s\\n' " + sq(a) + " | sha256sum" },
		func(a string) string { return "test -n " + sq(a) + " && echo set || echo empty; false" },
	}
	var out []string
	for _, f := range forms {
		for _, a := range diffAtoms {
			out = append(out, f(a))
		}
	}
	return append(out, "ls -la --time-style=+ | awk '{print $1, $NF}'", "cat data.txt | wc -l", "test -w . && echo RW || echo RO",
		"pwd", "exit 7", "git status --short", "printf 'a\\0b' | od -c", "cat missing.txt", "echo ${UNSET:-default}",
		"for f in *.txt; do echo \"$f\"; done", "read -r x <data.txt; echo \"$x\"", "echo $((6*7))", "yes | head -3",
		"echo hidden 2>/dev/null >/dev/null; cat /dev/null; echo after", "head -c 4 /dev/zero | od -c", "echo to-stdout >/dev/stdout",
		"head -c 8 /dev/urandom | wc -c", "ls -l /dev/null | cut -c1")
}

// TestE2E_SandboxDifferential: 600 read commands print the same (stdout,
// stderr, exit code) through flower's sandbox path — the rewritten line run
// by bash -c as claude's shell runs it — as bare; except the one that asks
// whether the folder is writable, which the sandbox answers RO (the
// control that the sandbox is really there).
func TestE2E_SandboxDifferential(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	hook := testbed.BuildBinary(t, "./cmd/flower-hook")
	dir := t.TempDir()
	testbed.GitInit(t, dir)
	for name, data := range map[string]string{"data.txt": "plain\nünïcödé 🌼 中文 ça\nit's\n", "b c.txt": "spaced\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(line string) string {
		cmd := testbed.Command(t, "bash", "-c", line)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		_ = cmd.Run()
		return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", cmd.ProcessState.ExitCode(), out.String(), errb.String())
	}
	cmds := diffCommands()
	if len(cmds) < 500 {
		t.Fatalf("only %d commands", len(cmds))
	}
	// The hook rewrites each command here (it may fail the test, which
	// only the test's goroutine may do); the pairs then run four at a
	// time: a sandbox's start mostly waits on the kernel (namespaces,
	// mounts), and 600 pairs one after the other took 250 s of a suite
	// whose end waited for them.
	boxedLines := make([]string, len(cmds))
	for i, c := range cmds {
		boxedLines[i] = sandboxLine(t, hook, c, false)
	}
	bares, boxeds := make([]string, len(cmds)), make([]string, len(cmds))
	next := make(chan int)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range next {
				bares[i], boxeds[i] = run(cmds[i]), run(boxedLines[i])
			}
		})
	}
	for i := range cmds {
		next <- i
	}
	close(next)
	wg.Wait()
	same := 0
	for i, c := range cmds {
		bare, boxed := bares[i], boxeds[i]
		if c == "test -w . && echo RW || echo RO" {
			if !strings.Contains(bare, "RW") || !strings.Contains(boxed, "RO") {
				t.Errorf("control: writable bare and read-only boxed, got %q and %q", bare, boxed)
			}
			continue
		}
		if bare != boxed {
			t.Errorf("%q differs:\nbare:  %q\nboxed: %q", c, bare, boxed)
			continue
		}
		same++
	}
	t.Logf("%d of %d commands printed the same inside the sandbox as bare", same, len(cmds)-1)
}

// TestE2E_SandboxDiesWithItsShell: when the shell running a sandboxed
// command is killed (claude's timeout kills the tool's process group), the
// command inside — in its own session, out of that group — dies too, and
// so do its own children (the PID namespace ends). Control: they were
// running before the kill.
func TestE2E_SandboxDiesWithItsShell(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	hook := testbed.BuildBinary(t, "./cmd/flower-hook")
	cmd := testbed.Command(t, "bash", "-c", sandboxLine(t, hook, "sleep 300 & sleep 301; echo never", false))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var sleeps []int
	testbed.Await(t, "both sleeps run", func() bool {
		sleeps = sleeps[:0]
		for pid, comm := range testbed.Descendants(cmd.Process.Pid) {
			if comm == "sleep" {
				sleeps = append(sleeps, pid)
			}
		}
		return len(sleeps) == 2
	})
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
	testbed.AwaitWithin(t, 30*time.Second, "the sleeps are gone", func() bool {
		for _, pid := range sleeps {
			if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && !strings.Contains(string(stat), ") Z ") {
				return false
			}
		}
		return true
	})
}

// TestE2E_SandboxedGlanceIsReadOnly: the coordinator's glance
// `test -w . && echo RW || echo RO` answers RO through delegate --glance
// --sandbox (asserted in the recorded request), and a glance still reads
// the workspace; the writing command is denied by the classifier.
// Control: without --sandbox the same glance answers RW.
func TestE2E_SandboxedGlanceIsReadOnly(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	hook := testbed.BuildBinary(t, "./cmd/flower-hook")
	for _, sandbox := range []bool{true, false} {
		t.Run(fmt.Sprintf("sandbox=%v", sandbox), func(t *testing.T) {
			t.Parallel()
			bed := mainBed(t, "glance", bashCall("test -w . && echo RW || echo RO", "look"), bashCall("ls | grep -c glance-marker", "look"), scripted.Reply{Text: "glanced"})
			putFile(t, bed.Workspace, "glance-marker", nil)
			args := hook + " delegate --glance"
			if sandbox {
				args += " --sandbox"
			}
			settings := writeSettings(t, bed.Home, hookEntry{"PreToolUse", hooks.DefaultDelegateTools, hooks.DenyCommand(args)})
			run := runClaude(t, bed, nil, "glance", "--settings", settings, "--allowedTools", "Bash")
			if run.Result.Get("result").String() != "glanced" {
				t.Fatalf("exit %d result %s stderr %s", run.ExitCode, run.Result.Raw, run.Stderr)
			}
			main := bed.Model.RequestsFor("main")
			want := map[bool]string{true: "RO", false: "RW"}[sandbox]
			if r := lastResult(t, main[1]); r.IsError || strings.TrimSpace(r.Content) != want {
				t.Errorf("test -w answered %+v, want %s", r, want)
			}
			if r := lastResult(t, main[2]); r.IsError || strings.TrimSpace(r.Content) != "1" {
				t.Errorf("the glance did not read the workspace: %+v", r)
			}
		})
	}
}

// TestE2E_SandboxAloneHolds: with the classifier switched off (the
// test-only --unclassified), the coordinator's `touch` of a marker in the
// workspace runs, in the sandbox, and changes nothing; a read-only role's
// (whitelist --glance --sandbox, as the judge and the oracle get it)
// glance answers RO too, and a judge that may run commands runs them in the
// sandbox with its caches in the private /tmp. Control: the subagent's
// touch lands (workers are not sandboxed).
func TestE2E_SandboxAloneHolds(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	hook := testbed.BuildBinary(t, "./cmd/flower-hook")
	t.Run("coordinator", func(t *testing.T) {
		t.Parallel()
		bed := delegationBed(t, "write please", "touch", bashCall("touch WS/main-marker; echo tried", "write"), bashCall("touch WS/sub-marker", "write"))
		settings := writeSettings(t, bed.Home, hookEntry{"PreToolUse", hooks.DefaultDelegateTools, hooks.DenyCommand(hook + " delegate --glance --sandbox --unclassified")})
		agents := `{"worker":{"description":"does work","prompt":"You are WORKER","tools":["Bash"]}}`
		run := runClaude(t, bed, nil, "write please", "--settings", settings, "--agents", agents, "--allowedTools", "Bash")
		if run.Result.Get("result").String() != "main done" {
			t.Fatalf("exit %d result %s stderr %s", run.ExitCode, run.Result.Raw, run.Stderr)
		}
		r := lastResult(t, bed.Model.RequestsFor("main")[1])
		if !strings.Contains(r.Content, "Read-only file system") || !strings.Contains(r.Content, "tried") {
			t.Errorf("the coordinator's touch did not run in the sandbox: %+v", r)
		}
		if _, err := os.Stat(filepath.Join(bed.Workspace, "main-marker")); err == nil {
			t.Error("the sandboxed touch wrote into the workspace")
		}
		if _, err := os.Stat(filepath.Join(bed.Workspace, "sub-marker")); err != nil {
			t.Errorf("control: the subagent's touch did not land: %v", err)
		}
	})
	t.Run("judge that may run", func(t *testing.T) {
		t.Parallel()
		bed := mainBed(t, "verify it", bashCall("touch WS/judge-marker; mkdir -p \"$GOCACHE\" && echo \"cache $GOCACHE\"", "verify"), scripted.Reply{Text: "verified"})
		settings := writeSettings(t, bed.Home, hookEntry{"PreToolUse", hooks.HandsOnTools,
			hooks.DenyCommand(hook + " whitelist --allow Read,Glob,Grep,Bash --role judge --glance --sandbox")})
		run := runClaude(t, bed, nil, "verify it", "--settings", settings, "--allowedTools", "Bash")
		if run.Result.Get("result").String() != "verified" {
			t.Fatalf("exit %d result %s stderr %s", run.ExitCode, run.Result.Raw, run.Stderr)
		}
		r := lastResult(t, bed.Model.RequestsFor("main")[1])
		if !strings.Contains(r.Content, "Read-only file system") || !strings.Contains(r.Content, "cache /tmp/.cache/go-build") {
			t.Errorf("the judge's Bash did not run in the sandbox with its scratch: %+v", r)
		}
		if _, err := os.Stat(filepath.Join(bed.Workspace, "judge-marker")); err == nil {
			t.Error("the judge's touch wrote into the workspace")
		}
	})
	t.Run("read-only role", func(t *testing.T) {
		t.Parallel()
		bed := mainBed(t, "judge it", bashCall("test -w . && echo RW || echo RO", "look"), bashCall("touch WS/judge-marker", "write"), scripted.Reply{Text: "judged"})
		settings := writeSettings(t, bed.Home, hookEntry{"PreToolUse", hooks.HandsOnTools,
			hooks.DenyCommand(hook + " whitelist --allow Read,Glob,Grep --role judge --glance --sandbox")})
		run := runClaude(t, bed, nil, "judge it", "--settings", settings)
		if run.Result.Get("result").String() != "judged" {
			t.Fatalf("exit %d result %s stderr %s", run.ExitCode, run.Result.Raw, run.Stderr)
		}
		main := bed.Model.RequestsFor("main")
		if r := lastResult(t, main[1]); strings.TrimSpace(r.Content) != "RO" {
			t.Errorf("the judge's glance answered %+v, want RO", r)
		}
		if r := lastResult(t, main[2]); !r.IsError || !strings.Contains(r.Content, hooks.WhitelistReason("judge", "Bash")) {
			t.Errorf("the judge's write was not denied: %+v", r)
		}
	})
}

// BenchmarkSandboxOverhead runs one glance (ls /) three ways in one run,
// interleaved: bare (bash -c, as claude's shell runs a command), through
// flower's sandbox path (the rewritten line run by bash -c: claude's shell
// execs bwrap, which runs bash) and the floor (a minimal bwrap --ro-bind /
// / --dev-bind /dev /dev -- bash -c). It reports each p50 in ms and
// flower's overhead over bare as a multiple of the floor's
// (overhead_ratio; the budget is 1.15), also against the floor started
// from a shell as claude starts every command (floorsh, overhead_ratio_sh:
// the same processes as flower's path: a shell, bwrap, a shell). Against
// the floor, flower's path starts one bash more whatever its sandbox
// holds: floorsh_ratio is what the floor itself scores that way, the least
// overhead_ratio can be.
func BenchmarkSandboxOverhead(b *testing.B) {
	requireSandbox(b)
	hook := testbed.BuildBinary(b, "./cmd/flower-hook")
	const glance = "ls /"
	floor := []string{"bwrap", "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "--", "bash", "-c", glance}
	ways := map[string][]string{
		"bare":   {"bash", "-c", glance},
		"flower": {"bash", "-c", sandboxLine(b, hook, glance, false)},
		"floor":  floor,
		// bash -c execs a lone command: this is the floor plus one bash
		// start, as flower's path is.
		"floorsh": {"bash", "-c", strings.Join(floor[:len(floor)-1], " ") + " " + sq(glance)},
	}
	p50 := interleaved(b, ways)
	for name, v := range p50 {
		b.ReportMetric(v, name+"_p50_ms")
	}
	b.ReportMetric((p50["flower"]-p50["bare"])/(p50["floor"]-p50["bare"]), "overhead_ratio")
	b.ReportMetric((p50["flower"]-p50["bare"])/(p50["floorsh"]-p50["bare"]), "overhead_ratio_sh")
	b.ReportMetric((p50["floorsh"]-p50["bare"])/(p50["floor"]-p50["bare"]), "floorsh_ratio")
}

// interleaved runs every way max(b.N, 30) times, the ways in turn, in a
// new order each round (a shared machine's load then weighs on each
// alike, and no way always follows the same one), and returns each way's
// p50 in ms.
func interleaved(b *testing.B, ways map[string][]string) map[string]float64 {
	b.Helper()
	names := slices.Sorted(maps.Keys(ways))
	times := map[string][]time.Duration{}
	b.ResetTimer()
	for i := 0; i < max(b.N, 30); i++ {
		rand.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		for _, name := range names {
			argv := ways[name]
			cmd := exec.Command(argv[0], argv[1:]...)
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%s: %v %s", name, err, out)
			}
			times[name] = append(times[name], time.Since(start))
		}
	}
	p50 := map[string]float64{}
	for name, ts := range times {
		slices.Sort(ts)
		p50[name] = float64(ts[len(ts)/2].Microseconds()) / 1000
	}
	return p50
}

// BenchmarkSandboxComponents prices each part of flower's sandbox alone:
// the floor started from a shell (floorsh), and beside it the floor with
// one part added or swapped, interleaved; each part's cost is its p50 over
// the floor's (<part>_ms). Parts: bwrap's --dev (dev) against flower's
// /dev (the host's read-only and nodev, the harmless nodes bound back:
// nodes, flower's three; ro_dev: none bound back, what the binds cost), a new PID namespace
// with its /proc (pid_proc; pid_proc_as_pid1 without bwrap's reaper), the
// private /tmp, the seccomp filter read from flower's file (seccomp_file)
// or a pipe the shell fills (seccomp_pipe), a new session (what the filter
// stands in for), capabilities dropped and --die-with-parent (caps), the
// environment flower sets (env), the printf decoding of the command
// (decode), and flower's whole line (flower).
func BenchmarkSandboxComponents(b *testing.B) {
	requireSandbox(b)
	hook := testbed.BuildBinary(b, "./cmd/flower-hook")
	const glance = "ls /"
	line := sandboxLine(b, hook, glance, false)
	_, env, _ := strings.Cut(line, " --cap-drop ALL ")
	env, _, _ = strings.Cut(env, " -- ")
	_, file, _ := strings.Cut(line, " 9<")
	prog, _ := hooks.TIOCSTIFilter(runtime.GOARCH)
	var nodes string
	for _, n := range []string{"null", "zero", "urandom"} {
		nodes += " --dev-bind-try /dev/" + n + " /dev/" + n
	}
	way := func(dev, extra, redirect string) []string {
		return []string{"bash", "-c", "exec bwrap --ro-bind / /" + dev + extra + " -- bash -c " + sq(glance) + redirect}
	}
	const floorDev = " --dev-bind /dev /dev"
	ways := map[string][]string{
		"floorsh":          way(floorDev, "", ""),
		"dev":              way(" --dev /dev", "", ""),
		"nodes":            way(nodes, "", ""),
		"ro_dev":           way("", "", ""),
		"pid_proc":         way(floorDev, " --unshare-pid --proc /proc", ""),
		"pid_proc_as_pid1": way(floorDev, " --unshare-pid --as-pid-1 --proc /proc", ""),
		"tmp":              way(floorDev, " --tmpfs /tmp", ""),
		"seccomp_file":     way(floorDev, " --seccomp 9", " 9<"+file),
		"seccomp_pipe":     way(floorDev, " --seccomp 9", " 9< <(printf %b "+sq(hexBytes(prog))+")"),
		"new_session":      way(floorDev, " --new-session", ""),
		"caps":             way(floorDev, " --die-with-parent --cap-drop ALL", ""),
		"env":              way(floorDev, " "+env, ""),
		"decode":           {"bash", "-c", "printf -v c %b " + sq(hexBytes([]byte(glance))) + " && exec bwrap --ro-bind / /" + floorDev + ` -- bash -c "$c"`},
		"flower":           {"bash", "-c", line},
	}
	if !strings.HasPrefix(file, "/") || !strings.HasPrefix(env, "--setenv ") {
		b.Fatalf("flower's line has changed shape: %s", line)
	}
	p50 := interleaved(b, ways)
	b.ReportMetric(p50["floorsh"], "floorsh_p50_ms")
	for name, v := range p50 {
		if name != "floorsh" {
			b.ReportMetric(v-p50["floorsh"], name+"_ms")
		}
	}
}

// hexBytes writes b as \xHH escapes, for printf %b.
func hexBytes(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		fmt.Fprintf(&s, `\x%02x`, c)
	}
	return s.String()
}

// tiocsti is a python program that pushes a keystroke into its terminal
// (stdin) with TIOCSTI and says whether the kernel let it.
const tiocsti = "import fcntl, termios\ntry:\n    fcntl.ioctl(0, termios.TIOCSTI, b'x'); print('INJECTED')\nexcept OSError as e:\n    print('refused', e.errno)\n"

// TestE2E_SandboxRefusesTIOCSTI: a sandboxed command whose stdin is the
// caller's terminal cannot push keystrokes into it (the seccomp filter
// that stands in for a new session). Control: the same program run bare
// on the same kind of terminal injects.
func TestE2E_SandboxRefusesTIOCSTI(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	py := testbed.RequireTool(t, "python3", "the TIOCSTI probe")
	hook := testbed.BuildBinary(t, "./cmd/flower-hook")
	probe := "python3 -c " + sq(tiocsti)
	for _, c := range []struct{ line, want string }{{sandboxLine(t, hook, probe, false), "refused 1"}, {probe, "INJECTED"}} {
		ptmx, tty, err := pty.Open()
		if err != nil {
			testbed.Unavailable(t, "no pty: "+err.Error())
		}
		cmd := testbed.Command(t, "bash", "-c", c.line)
		cmd.Stdin = tty
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		err = cmd.Run()
		tty.Close()
		ptmx.Close()
		if !strings.Contains(out.String(), c.want) {
			t.Errorf("%s: %v %q, want %q", py, err, out.String(), c.want)
		}
	}
}
