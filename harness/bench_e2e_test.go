package harness_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowerhq/flower/testkit/testbed"
)

// BenchmarkStepParts splits StepVsBare's gap into its parts, each measured
// beside the others in the same loop: bare claude -p; claude with exactly
// the argv and environment flower gives it (settings with the guards,
// --session-mirror, stream-json in) but no flower; the same with stdin kept
// open until the result, as flower must (interrupts and handoffs are
// control requests on stdin); and flower step itself. What lies between
// the last two is flower's own process. Like StepVsBare it takes at least
// minPairs samples of each.
func BenchmarkStepParts(b *testing.B) {
	bed, flower, hook, runDir := stepBench(b)
	args, env := flowerClaudeCall(b, bed, flower, hook, runDir)
	prompt := `{"type":"user","message":{"role":"user","content":"hi"},"parent_tool_use_id":null,"session_id":""}` + "\n"
	replay := func(keepOpen bool) time.Duration {
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
		return time.Since(start)
	}
	run := timedRun(b)
	var bare, withArgs, keptOpen, step []time.Duration
	n := pairs(b)
	b.ResetTimer()
	interleave(n,
		func() {
			bare = append(bare, run(bareClaude(b, bed)))
		},
		func() { withArgs = append(withArgs, replay(false)) },
		func() { keptOpen = append(keptOpen, replay(true)) },
		func() { step = append(step, run(flowerStep(b, bed, flower, hook, runDir, "hi"))) })
	b.StopTimer()
	perPair(b, n)
	b.ReportMetric(median(bare).Seconds(), "bare-s")
	b.ReportMetric(median(withArgs).Seconds(), "flower-args-s")
	b.ReportMetric(median(keptOpen).Seconds(), "stdin-open-s")
	b.ReportMetric(median(step).Seconds(), "step-s")
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
