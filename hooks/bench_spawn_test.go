package hooks_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flowerhq/flower/hooks"
	"github.com/flowerhq/flower/testkit/testbed"
)

// pyHook is the Python equivalent of `flower-hook delegate`: parse the same
// JSON, decide the same way, print the same answer, report the same line.
const pyHook = `import json, os, re, socket, sys
d = json.load(sys.stdin)
out = {}
dec = "pass"
if not d.get("agent_id") and re.fullmatch(r"Bash|Write|Edit|NotebookEdit", d.get("tool_name", "")):
    dec = "deny"
    out = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
           "permissionDecisionReason": "The main thread does not use %s itself: delegate it with the Agent tool." % d["tool_name"]}}
print(json.dumps(out, separators=(",", ":")))
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
// stdin, decide, print, report to a live unix socket, exit), flower-hook
// against the python3 equivalent. Run with -benchtime=500x; p50/p99 are
// reported per sub-benchmark (scripts/bench-hook.sh prints both), with the
// child's CPU time (user+sys) beside the wall time.
func BenchmarkHookSpawn(b *testing.B) {
	hook := testbed.BuildBinary(b, "./cmd/flower-hook")
	dir, err := os.MkdirTemp("", "fhb")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	reports := listen(b)
	sockPath := reports.path
	py := filepath.Join(dir, "hook.py")
	if err := os.WriteFile(py, []byte(pyHook), 0o644); err != nil {
		b.Fatal(err)
	}
	// The floor of any Go binary on this machine: an empty main.
	hello := filepath.Join(dir, "hello")
	if err := os.WriteFile(hello+".go", []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	if out, err := testbed.Command(b, "go", "build", "-o", hello, hello+".go").CombinedOutput(); err != nil {
		b.Fatalf("build hello: %v %s", err, out)
	}
	floor := filepath.Join(dir, "floor")
	if err := os.WriteFile(floor+".go", []byte(floorHook), 0o644); err != nil {
		b.Fatal(err)
	}
	if out, err := testbed.Command(b, "go", "build", "-o", floor, floor+".go").CombinedOutput(); err != nil {
		b.Fatalf("build floor: %v %s", err, out)
	}
	// The interpreter itself, not a version-manager shim (pyenv's adds a
	// bash script per start and would flatter flower-hook).
	python, err := testbed.Command(b, "python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		b.Fatalf("python3: %v", err)
	}
	p50 := map[string]float64{}
	for _, c := range []struct {
		name string
		argv []string
	}{
		// The machine's floor: spawning a process that does nothing.
		{"baseline-true", []string{"/bin/true"}},
		{"baseline-go-empty", []string{hello}},
		// The floor of any Go hook: only the I/O a hook must do.
		{"floor-go-hook-io", []string{floor}},
		{"flower-hook", []string{hook, "delegate"}},
		{"python3", []string{string(bytes.TrimSpace(python)), py}},
		// As the CLI runs a hook command: through /bin/sh, with the
		// fail-closed wrapper, beside the same shell starting the empty
		// Go program.
		{"baseline-sh-go-empty", []string{"/bin/sh", "-c", hooks.ShellQuote(hello)}},
		{"sh-flower-hook-wrapped", []string{"/bin/sh", "-c", hooks.DenyCommand(hooks.ShellQuote(hook), hooks.GuardDelegate)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var times, cpu []time.Duration
			before := reports.count()
			for b.Loop() {
				cmd := exec.Command(c.argv[0], c.argv[1:]...)
				cmd.Env = append(os.Environ(), "FLOWER_SOCKET="+sockPath)
				cmd.Stdin = bytes.NewReader([]byte(benchInput))
				var out bytes.Buffer
				cmd.Stdout = &out
				start := time.Now()
				if err := cmd.Run(); err != nil {
					b.Fatalf("%s: %v", c.name, err)
				}
				times = append(times, time.Since(start))
				cpu = append(cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
				if !strings.HasPrefix(c.name, "baseline") && !bytes.Contains(out.Bytes(), []byte(`"permissionDecision":"deny"`)) {
					b.Fatalf("%s answered %s", c.name, out.Bytes())
				}
			}
			slices.Sort(times)
			slices.Sort(cpu)
			pct := func(d []time.Duration, q float64) float64 {
				return float64(d[int(q*float64(len(d)-1))].Microseconds()) / 1000
			}
			p := func(q float64) float64 { return pct(times, q) }
			b.ReportMetric(p(0.50), "p50-ms")
			b.ReportMetric(p(0.99), "p99-ms")
			// CPU time of the child (user+sys): what the hook costs the
			// machine, independent of how loaded it is.
			b.ReportMetric(pct(cpu, 0.50), "cpu-p50-ms")
			if !strings.HasPrefix(c.name, "baseline") {
				// The hooks have exited; the listener may still be reading.
				testbed.Eventually(10*time.Second, func() bool { return reports.count()-before >= len(times) })
			}
			if got := reports.count() - before; !strings.HasPrefix(c.name, "baseline") && got != len(times) {
				b.Errorf("%s: %d socket lines for %d runs", c.name, got, len(times))
			}
			fmt.Fprintf(os.Stderr, "%-22s runs=%d wall p50=%.2fms p99=%.2fms  cpu p50=%.2fms\n", c.name, len(times), p(0.50), p(0.99), pct(cpu, 0.50))
			p50[c.name] = p(0.50)
		})
	}
	// The target is a ratio to the baseline measured in this same run.
	for _, r := range [][2]string{{"flower-hook", "baseline-go-empty"}, {"floor-go-hook-io", "baseline-go-empty"},
		{"flower-hook", "floor-go-hook-io"}, {"sh-flower-hook-wrapped", "baseline-sh-go-empty"}} {
		if p50[r[0]] > 0 && p50[r[1]] > 0 {
			fmt.Fprintf(os.Stderr, "ratio %s / %s (wall p50) = %.2fx (target <= 1.2x)\n", r[0], r[1], p50[r[0]]/p50[r[1]])
		}
	}
}
