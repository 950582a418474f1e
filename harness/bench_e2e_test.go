package harness_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// BenchmarkStepVsBare times a whole `flower step hi` process against a
// whole `claude -p hi` process on the same scripted model, as a user sees
// them (exec to exit, output read), interleaved in one run, and reports
// both medians and their ratio (target ≤ 1.05); the two take turns going
// first (interleave). It times at least minPairs pairs whatever b.N is, so
// that a plain `go test -bench StepVsBare` (b.N = 1) gives a median and
// not one sample. From each step's events it also reports where flower's
// process spends its time (stepPhases), and the CPU time of both process
// trees (compareSteps).
func BenchmarkStepVsBare(b *testing.B) {
	bed, flower, hook, runDir := stepBench(b)
	compareSteps(b, "StepVsBare", runDir,
		stepKind{"bare claude -p", "ok", func() *exec.Cmd { return bareClaude(b, bed) }},
		stepKind{"flower step", "ok", func() *exec.Cmd { return flowerStep(b, bed, flower, hook, runDir, "hi") }})
}

// phaseNames are the parts of a flower step process stepPhases measures.
var phaseNames = [][2]string{
	{"start", "exec → step_start: flower's process start, flags, the Runtime (run dir, plugin, socket)"},
	{"boot", "step_start → init: the supervisor's exec and claude's boot, to its system/init"},
	{"turn", "init → result: claude's turn against the model"},
	{"exit", "result → step_end: claude's exit once its stdin closes, the tree reaped, the config dir scrubbed"},
	{"settle", "step_end → exit: the store's checkpoint and the manifest row (fsync'd), the text printed, Close"},
}

// stepPhases splits one flower step process, exec at began and exit at
// ended, by the times of the newest run's events in runDir.
func stepPhases(b *testing.B, runDir string, began, ended time.Time) map[string]time.Duration {
	paths, _ := filepath.Glob(filepath.Join(runDir, "*", "events.jsonl"))
	var newest string
	var at time.Time
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && st.ModTime().After(at) {
			newest, at = p, st.ModTime()
		}
	}
	data, err := os.ReadFile(newest)
	if err != nil {
		b.Fatalf("events of the step: %v", err)
	}
	times := map[string]time.Time{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ev harness.Event
		if json.Unmarshal([]byte(l), &ev) == nil {
			if _, seen := times[ev.Kind]; !seen {
				times[ev.Kind] = ev.Time
			}
		}
	}
	marks := []time.Time{began, times[harness.EventStepStart], times[harness.EventInit], times[harness.EventResult], times[harness.EventStepEnd], ended}
	out := map[string]time.Duration{}
	for i, ph := range phaseNames {
		out[ph[0]] = marks[i+1].Sub(marks[i])
	}
	return out
}

// bareClaude is the baseline of the step benchmarks: claude -p on the
// same prompt and model, as a user runs it (text out).
func bareClaude(b *testing.B, bed *testbed.Bed) *exec.Cmd {
	return bed.Command(testbed.Context(b), "-p", "hi")
}

// minPairs is how many interleaved samples of each kind the step
// benchmarks take at the least: a median of fewer moves by more than the
// 5% it is compared with on a 2-core machine.
const minPairs = 40

// pairs is how many samples of each kind a step benchmark takes: b.N, and
// at least minPairs.
func pairs(b *testing.B) int { return max(b.N, minPairs) }

// interleave runs each of kinds once per round, n rounds, each kind going
// first in turn: what one run leaves behind (caches, the clock of the CPU)
// favours none of them.
func interleave(n int, kinds ...func()) {
	for i := range n {
		for k := range kinds {
			kinds[(i+k)%len(kinds)]()
		}
	}
}

// perPair reports the time of one of n pairs as ns/op (the timer counted
// all of them).
func perPair(b *testing.B, n int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/op")
}

// stepBench is the bed of the step benchmarks: a model that answers "ok",
// the built flower and flower-hook, and a run dir.
func stepBench(b *testing.B) (bed *testbed.Bed, flower, hook, runDir string) {
	bed = testbed.New(b, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main",
		Func: func(scripted.Request) scripted.Reply { return scripted.Reply{Text: "ok"} }}}})
	return bed, testbed.BuildBinary(b, "./cmd/flower"), testbed.BuildBinary(b, "./cmd/flower-hook"),
		filepath.Join(filepath.Dir(bed.Workspace), "runs")
}

// timedRun runs a command to its end and returns its wall time.
func timedRun(b *testing.B) func(*exec.Cmd) time.Duration {
	return func(cmd *exec.Cmd) time.Duration {
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", cmd.Args[0], err, out)
		}
		return time.Since(start)
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkStepParts splits StepVsBare's gap into its parts, each measured
// beside the others in the same loop: bare claude -p; claude with exactly
// the argv and environment flower gives it (settings with the guards,
// --session-mirror, stream-json in) but no flower; the same with stdin kept
// open until the result, as flower must (interrupts and handoffs are
// control requests on stdin); and flower step itself (and, with
// FLOWER_BENCH_BASE_FLOWER, another build of it). What lies between the
// last two is flower's own process. Two more kinds split claude's side:
// flower's argv with settings that register no hook, and with one
// SessionStart hook that only runs shell builtins — the floor of any
// per-step liveness proof a hook gives, which the guards need
// (guards.md). Like StepVsBare it takes at least minPairs samples of each.
func BenchmarkStepParts(b *testing.B) {
	bed, flower, hook, runDir := stepBench(b)
	args, env := flowerClaudeCall(b, bed, flower, hook, runDir)
	prompt := `{"type":"user","message":{"role":"user","content":"hi"},"parent_tool_use_id":null,"session_id":""}` + "\n"
	// The one hook appends a line with the shell's builtin echo (no process
	// beyond claude's /bin/sh), so that the figure is shown to be of a hook
	// that ran: one line per run, checked at the end.
	fired := filepath.Join(b.TempDir(), "fired")
	noHooks, oneHookArgs := withSettings(b, args, `{}`),
		withSettings(b, args, `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"echo x >> '`+fired+`'","timeout":30}]}]}}`)
	replay := func(args []string, keepOpen bool) sample {
		cmd := exec.Command(bed.Claude, args...)
		cmd.Env, cmd.Dir = env, bed.Workspace
		in, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		in.Write([]byte(prompt))
		if !keepOpen {
			in.Close()
		}
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			if strings.Contains(sc.Text(), `"type":"result"`) {
				in.Close()
			}
		}
		if err := cmd.Wait(); err != nil {
			b.Fatalf("claude with flower's arguments: %v", err)
		}
		return sample{time.Since(start), cpuOf(cmd)}
	}
	timed := timedRun(b)
	run := func(cmd *exec.Cmd) sample { return sample{timed(cmd), cpuOf(cmd)} }
	var bare, unhooked, oneHook, withArgs, keptOpen, step, baseStep []sample
	kinds := []func(){
		func() {
			bare = append(bare, run(bareClaude(b, bed)))
		},
		func() { unhooked = append(unhooked, replay(noHooks, false)) },
		func() { oneHook = append(oneHook, replay(oneHookArgs, false)) },
		func() { withArgs = append(withArgs, replay(args, false)) },
		func() { keptOpen = append(keptOpen, replay(args, true)) },
		func() { step = append(step, run(flowerStep(b, bed, flower, hook, runDir, "hi"))) }}
	// FLOWER_BENCH_BASE_FLOWER: another build of flower (main's, say),
	// timed in the same loop, so that a change is measured against its
	// base under the same load.
	base := os.Getenv("FLOWER_BENCH_BASE_FLOWER")
	if base != "" {
		kinds = append(kinds, func() { baseStep = append(baseStep, run(flowerStep(b, bed, base, hook, runDir, "hi"))) })
	}
	n := pairs(b)
	b.ResetTimer()
	interleave(n, kinds...)
	b.StopTimer()
	perPair(b, n)
	data, _ := os.ReadFile(fired)
	if ran := strings.Count(string(data), "x\n"); ran != n {
		b.Fatalf("the one SessionStart hook ran %d times in %d runs", ran, n)
	}
	type kind struct {
		name, label string
		s           []sample
	}
	all := []kind{{"bare", "bare claude -p", bare}, {"no-hooks", "flower's argv, settings with no hook", unhooked},
		{"one-hook", "flower's argv, one SessionStart hook: echo", oneHook},
		{"flower-args", "claude with flower's argv and environment", withArgs},
		{"stdin-open", "the same, stdin open until the result", keptOpen}, {"step", "flower step", step}}
	if base != "" {
		all = append(all, kind{"base-step", "flower step, FLOWER_BENCH_BASE_FLOWER's build", baseStep})
	}
	for _, k := range all {
		b.ReportMetric(median(walls(k.s)).Seconds(), k.name+"-s")
		b.ReportMetric(median(cpus(k.s)).Seconds(), k.name+"-cpu-s")
		fmt.Fprintf(os.Stderr, "StepParts: %-44s wall p50 %6.0f ms (%.3f of bare), CPU p50 %5.0f ms (%.3f of bare)\n", k.label,
			median(walls(k.s)).Seconds()*1000, ratioOf(walls(bare), walls(k.s)), median(cpus(k.s)).Seconds()*1000, ratioOf(cpus(bare), cpus(k.s)))
	}
}

// withSettings is args with its --settings file replaced by one holding
// settings.
func withSettings(b *testing.B, args []string, settings string) []string {
	path := filepath.Join(b.TempDir(), "settings.json")
	if err := os.WriteFile(path, []byte(settings), 0o600); err != nil {
		b.Fatal(err)
	}
	out := slices.Clone(args)
	for i, a := range out {
		if strings.HasPrefix(a, "--settings=") {
			out[i] = "--settings=" + path
			return out
		}
	}
	b.Fatalf("flower gave claude no --settings: %q", args)
	return nil
}

// flowerClaudeCall runs one flower step through a wrapper that records the
// argv and environment flower starts claude with.
func flowerClaudeCall(b *testing.B, bed *testbed.Bed, flower, hook, runDir string) (args, env []string) {
	dir := b.TempDir()
	rec := filepath.Join(dir, "call")
	wrap := filepath.Join(dir, "claude")
	script := "#!/bin/sh\nprintf '%s\\0' \"$@\" > '" + rec + ".args'\nenv -0 > '" + rec + ".env'\nexec '" + bed.Claude + "' \"$@\"\n"
	if err := os.WriteFile(wrap, []byte(script), 0o700); err != nil {
		b.Fatal(err)
	}
	cmd := flowerStep(b, bed, flower, hook, runDir, "hi")
	for i, a := range cmd.Args {
		if a == bed.Claude {
			cmd.Args[i] = wrap
		}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("flower step through the wrapper: %v\n%s", err, out)
	}
	read := func(name string) []string {
		data, err := os.ReadFile(rec + name)
		if err != nil {
			b.Fatal(err)
		}
		return strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
	}
	return read(".args"), read(".env")
}
