package hooks_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flowerhq/flower/hooks"
	"github.com/flowerhq/flower/testkit/testbed"
)

// pyHook is the Python equivalent of `flower-hook delegate`: parse the same
// JSON, decide the same way, print the same answer (hooks.DelegateReason,
// as a Python string literal), report the same line.
var pyHook = strings.Replace(pyHookSource, "REASON", pyString(hooks.DelegateReason("%s")), 1)

// pyString is s as a Python string literal (a JSON string is one).
func pyString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

const pyHookSource = `import json, os, re, socket, sys
d = json.load(sys.stdin)
out = {}
dec = "pass"
if not d.get("agent_id") and re.fullmatch(r"Bash|Write|Edit|NotebookEdit", d.get("tool_name", "")):
    dec = "deny"
    out = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
           "permissionDecisionReason": REASON % d["tool_name"]}}
sys.stdout.buffer.write(json.dumps(out, separators=(",", ":"), ensure_ascii=False).encode() + b"\n")
p = os.environ.get("FLOWER_SOCKET")
if p:
    try:
        s = socket.socket(socket.AF_UNIX); s.settimeout(0.1); s.connect(p)
        s.sendall((json.dumps({"v": 1, "kind": "guard", "guard": "delegate", "decision": dec, "tool": d.get("tool_name", ""),
            "tool_use_id": d.get("tool_use_id", ""), "session_id": d.get("session_id", ""), "agent_id": d.get("agent_id", ""), "detail": {}}) + "\n").encode())
        s.close()
    except OSError:
        pass
`

const benchInput = `{"session_id":"9d3c5b1e-0000-4000-8000-000000000001","transcript_path":"/tmp/x.jsonl","cwd":"/tmp/ws","prompt_id":"p","permission_mode":"default","effort":{"level":"medium"},"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"make test","description":"run tests"},"tool_use_id":"toolu_0001_1"}`

// floorHook is the least any Go hook does: read the input, print a fixed
// deny, send one line to $FLOWER_SOCKET, with nothing but package syscall
// (not even os, whose start-up alone is measurable). No parsing, no
// decision: it is the floor under flower-hook, measured beside it.
const floorHook = `package main

import "syscall"

func main() {
	buf := make([]byte, 0, 8192)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(0, buf[len(buf):cap(buf)])
		if n <= 0 || err != nil {
			break
		}
		buf = buf[:len(buf)+n]
	}
	syscall.Write(1, []byte(` + "`" + `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"delegate"}}` + "`" + `+"\n"))
	if p, ok := syscall.Getenv("FLOWER_SOCKET"); ok {
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC|syscall.SOCK_NONBLOCK, 0)
		if err == nil {
			if syscall.Connect(fd, &syscall.SockaddrUnix{Name: p}) == nil {
				syscall.Write(fd, []byte(` + "`" + `{"v":1,"kind":"guard","guard":"delegate","decision":"deny"}` + "`" + `+"\n"))
			}
			syscall.Close(fd)
		}
	}
}
`

// BenchmarkHookSpawn times one hook invocation end to end (spawn, read
// stdin, decide, print, report to a live unix socket, exit): flower-hook
// beside the floor any Go hook can reach (floorHook), an empty Go program,
// /bin/true and the python3 equivalent. The kinds are interleaved — each
// round runs every kind once, each going first in turn — so that a loaded
// machine weighs on all alike; b.N is the rounds (-benchtime=500x). It
// prints p50/p99 wall time and the child's CPU time (user+sys) per kind,
// the ratios (target: flower-hook ≤ 1.15× the floor, p50), and, when
// valgrind is installed, each binary's instruction count (callgrind: the
// same on a quiet and a loaded machine). flower-hook is built as
// scripts/setup.sh builds it (testbed.HookBuildEnv: static, without the
// Green Tea GC); the floor with Go's defaults.
func BenchmarkHookSpawn(b *testing.B) {
	hook := testbed.BuildBinary(b, "./cmd/flower-hook")
	lite := testbed.BuildBinary(b, "./cmd/flower-hook-lite")
	dir := b.TempDir()
	reports := listen(b)
	kinds := spawnKinds(b, dir, hook, lite)
	times := make([][]time.Duration, len(kinds))
	cpu := make([][]time.Duration, len(kinds))
	faults := make([][]time.Duration, len(kinds)) // minor page faults, as a count
	before := reports.count()
	rounds := 0
	for i := 0; b.Loop(); i++ {
		for k := range kinds {
			j := (i + k) % len(kinds)
			wall, used, minflt := spawnOnce(b, kinds[j].name, kinds[j].argv, reports.path)
			times[j], cpu[j], faults[j] = append(times[j], wall), append(cpu[j], used), append(faults[j], time.Duration(minflt))
		}
		rounds++
	}
	b.StopTimer()
	reporting := 0
	for _, k := range kinds {
		if !strings.HasPrefix(k.name, "baseline") {
			reporting += rounds
		}
	}
	// The hooks have exited; the listener may still be reading.
	testbed.Eventually(10*time.Second, func() bool { return reports.count()-before >= reporting })
	if got := reports.count() - before; got != reporting {
		b.Errorf("%d socket lines for %d hook runs", got, reporting)
	}
	p50, cpu50 := map[string]float64{}, map[string]float64{}
	for j, k := range kinds {
		p50[k.name], cpu50[k.name] = quantileMS(times[j], 0.5), quantileMS(cpu[j], 0.5)
		b.ReportMetric(p50[k.name], k.name+"-p50-ms")
		fmt.Fprintf(os.Stderr, "%-22s runs=%d wall p50=%.2fms p99=%.2fms  cpu p50=%.2fms  page faults p50=%d\n", k.name, len(times[j]), p50[k.name],
			quantileMS(times[j], 0.99), cpu50[k.name], int64(slices.Sorted(slices.Values(faults[j]))[len(faults[j])/2]))
	}
	// The targets are ratios to baselines measured in this same run.
	for _, r := range [][2]string{{"flower-hook-lite", "floor-go-hook-io"}, {"flower-hook", "floor-go-hook-io"}, {"flower-hook", "baseline-go-empty"},
		{"floor-go-hook-io", "baseline-go-empty"}, {"sh-flower-hook-wrapped", "baseline-sh-go-empty"}, {"sh-flower-hook-lite-wrapped", "baseline-sh-go-empty"}} {
		if p50[r[1]] > 0 && cpu50[r[1]] > 0 {
			fmt.Fprintf(os.Stderr, "ratio %s / %s: wall p50 %.2fx, cpu p50 %.2fx\n", r[0], r[1], p50[r[0]]/p50[r[1]], cpu50[r[0]]/cpu50[r[1]])
		}
	}
	b.ReportMetric(p50["flower-hook"]/p50["floor-go-hook-io"], "hook/floor")
	b.ReportMetric(p50["flower-hook-lite"]/p50["floor-go-hook-io"], "lite/floor")
	reports.mu.Lock()
	answers := slices.Clone(reports.answers)
	reports.mu.Unlock()
	if len(answers) > 0 {
		fmt.Fprintf(os.Stderr, "decision server (hooks.Answer in this process, inside flower-hook-lite's wall time): runs=%d p50=%.3fms p99=%.3fms\n",
			len(answers), quantileMS(answers, 0.5), quantileMS(answers, 0.99))
	}
	fmt.Fprintf(os.Stderr, "target: flower-hook-lite (what a step's PreToolUse guards run) / floor-go-hook-io wall p50 <= 1.15x\n")
	instructionCounts(b, kinds, reports.path)
}

// spawnKind is one command BenchmarkHookSpawn times.
type spawnKind struct {
	name string
	argv []string
}

// spawnKinds builds the floor programs and lists what BenchmarkHookSpawn
// times.
func spawnKinds(b *testing.B, dir, hook, lite string) []spawnKind {
	py := filepath.Join(dir, "hook.py")
	if err := os.WriteFile(py, []byte(pyHook), 0o644); err != nil {
		b.Fatal(err)
	}
	build := func(name, src string) string {
		out := filepath.Join(dir, name)
		if err := os.WriteFile(out+".go", []byte(src), 0o644); err != nil {
			b.Fatal(err)
		}
		cmd := testbed.Command(b, "go", "build", "-o", out, out+".go")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("build %s: %v %s", name, err, msg)
		}
		return out
	}
	// The floor of any Go binary on this machine: an empty main.
	hello := build("hello", "package main\n\nfunc main() {}\n")
	floor := build("floor", floorHook)
	// The interpreter itself, not a version-manager shim (pyenv's adds a
	// bash script per start and would flatter flower-hook).
	python, err := testbed.Command(b, "python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		b.Fatalf("python3: %v", err)
	}
	return []spawnKind{
		// The machine's floor: spawning a process that does nothing.
		{"baseline-true", []string{"/bin/true"}},
		{"baseline-go-empty", []string{hello}},
		// The floor of any Go hook: only the I/O a hook must do.
		{"floor-go-hook-io", []string{floor}},
		{"flower-hook", []string{hook, "delegate"}},
		// As a step runs its PreToolUse guards: flower-hook-lite asking
		// this process (the listener answers with hooks.Answer).
		{"flower-hook-lite", []string{lite, hook, "delegate"}},
		{"python3", []string{string(bytes.TrimSpace(python)), py}},
		// As the CLI runs a hook command: through /bin/sh, with the
		// fail-closed wrapper, beside the same shell starting the empty
		// Go program.
		{"baseline-sh-go-empty", []string{"/bin/sh", "-c", hooks.ShellQuote(hello)}},
		{"sh-flower-hook-wrapped", []string{"/bin/sh", "-c", hooks.DenyCommand(hooks.ShellQuote(hook), hooks.GuardDelegate)}},
		{"sh-flower-hook-lite-wrapped", []string{"/bin/sh", "-c", hooks.DenyCommand(hooks.ShellQuote(lite)+" "+hooks.ShellQuote(hook), hooks.GuardDelegate)}},
	}
}

// spawnOnce runs argv once on benchInput: its wall time, its CPU time and
// its minor page faults (the last two as the machine's load leaves them).
func spawnOnce(b *testing.B, name string, argv []string, sock string) (wall, used time.Duration, minflt int64) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "FLOWER_SOCKET="+sock, hooks.ServerEnv+"="+strconv.Itoa(os.Getpid()))
	cmd.Stdin = bytes.NewReader([]byte(benchInput))
	var out bytes.Buffer
	cmd.Stdout = &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	wall = time.Since(start)
	if !strings.HasPrefix(name, "baseline") && !bytes.Contains(out.Bytes(), []byte(`"permissionDecision":"deny"`)) {
		b.Fatalf("%s answered %s", name, out.Bytes())
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		minflt = ru.Minflt
	}
	return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), minflt
}

// quantileMS is the q quantile of d in milliseconds.
func quantileMS(d []time.Duration, q float64) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[int(q*float64(len(s)-1))].Microseconds()) / 1000
}

// instructionCounts prints the instructions each Go hook executes (user
// space, valgrind's callgrind), when valgrind is installed: a figure the
// machine's load does not move (the least of three runs).
func instructionCounts(b *testing.B, kinds []spawnKind, sock string) {
	if _, err := exec.LookPath("valgrind"); err != nil {
		fmt.Fprintln(os.Stderr, "instructions: valgrind not installed, skipped")
		return
	}
	counts := map[string]float64{}
	for _, k := range kinds {
		if k.name != "floor-go-hook-io" && k.name != "flower-hook" && k.name != "flower-hook-lite" && k.name != "baseline-go-empty" {
			continue
		}
		// callgrind trips over the Go runtime's preemption signals (off
		// here: they change no count). The runtime's background threads
		// (sysmon, the scavenger) add a varying share, up to a sixth:
		// the least of three runs counts.
		for try := 0; try < 3; try++ {
			cmd := exec.Command("valgrind", append([]string{"--tool=callgrind", "--callgrind-out-file=/dev/null"}, k.argv...)...)
			cmd.Env = append(os.Environ(), "FLOWER_SOCKET="+sock, hooks.ServerEnv+"="+strconv.Itoa(os.Getpid()), "GODEBUG=asyncpreemptoff=1")
			cmd.Stdin = bytes.NewReader([]byte(benchInput))
			var errOut bytes.Buffer
			cmd.Stderr = &errOut
			if cmd.Run() != nil {
				continue
			}
			if m := regexp.MustCompile(`Collected : (\d+)`).FindSubmatch(errOut.Bytes()); m != nil {
				if n, _ := strconv.ParseFloat(string(m[1]), 64); counts[k.name] == 0 || n < counts[k.name] {
					counts[k.name] = n
				}
			}
		}
		fmt.Fprintf(os.Stderr, "instructions %-18s %.0f\n", k.name, counts[k.name])
	}
	if counts["floor-go-hook-io"] > 0 && counts["flower-hook-lite"] > 0 {
		fmt.Fprintf(os.Stderr, "ratio flower-hook-lite / floor-go-hook-io: instructions %.2fx (the client's; the server's share is the decision server's line above)\n", counts["flower-hook-lite"]/counts["floor-go-hook-io"])
	}
	if counts["floor-go-hook-io"] > 0 && counts["flower-hook"] > 0 {
		fmt.Fprintf(os.Stderr, "ratio flower-hook / floor-go-hook-io: instructions %.2fx\n", counts["flower-hook"]/counts["floor-go-hook-io"])
		b.ReportMetric(counts["flower-hook"]/counts["floor-go-hook-io"], "hook/floor-instructions")
	}
}
