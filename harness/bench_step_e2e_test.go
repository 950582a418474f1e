package harness_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// The step benchmarks of issue 36 item 5 beyond the trivial step: each is
// a whole `flower step` process against its own bare `claude -p` baseline
// on the same script, interleaved in one run (compareSteps).

// glanceCmd is the one Bash glance of BenchmarkStepGlance: it says whether
// the workspace can be written, so each run's answer shows whether the
// glance ran in the read-only sandbox (RO) or bare (RW).
const glanceCmd = "test -w . && echo RW || echo RO; ls"

// glanceScript makes one Bash glance, then answers with what it saw.
func glanceScript() *scripted.Script {
	return &scripted.Script{Conversations: []scripted.Conversation{{Name: "main", Func: func(r scripted.Request) scripted.Reply {
		trs := r.AllToolResults()
		if len(trs) == 0 {
			return scripted.Reply{ToolUse: &scripted.Block{Name: "Bash", Input: []byte(`{"command":"` + glanceCmd + `","description":"look"}`)}}
		}
		return scripted.Reply{Text: "glance: " + strings.Fields(trs[0].Content + " ?")[0]}
	}}}}
}

// BenchmarkStepGlance: sandbox on a glance-only step. A clarify step (a
// read-only role) under --sandbox=require whose model makes one Bash
// glance — flower-hook's whitelist guard rewrites it into the bubblewrap
// sandbox — against bare `claude -p --allowedTools=Bash` on the same
// script, no hooks. Every run's answer is checked: RO under flower, RW
// bare, so the figures are of what they claim.
func BenchmarkStepGlance(b *testing.B) {
	testbed.RequireTool(b, "bwrap", "the read-only sandbox")
	bed, flower, hook, runDir := stepBenchWith(b, glanceScript())
	compareSteps(b, "StepGlance", runDir,
		stepKind{"bare claude -p", "glance: RW", func() *exec.Cmd {
			return bed.Command(testbed.Context(b), "-p", "--allowedTools=Bash", "look")
		}},
		stepKind{"flower step (clarify, sandbox)", "glance: RO", func() *exec.Cmd {
			return flowerStep(b, bed, flower, hook, runDir, "--role", "clarify", "--sandbox=require", "look")
		}})
}

// verdictScript answers as a judge does: Markdown, then the typed verdict
// through StructuredOutput; once the tool has answered, a last word.
func verdictScript() *scripted.Script {
	return &scripted.Script{Conversations: []scripted.Conversation{{Name: "judge", Func: func(r scripted.Request) scripted.Reply {
		if len(r.AllToolResults()) > 0 {
			return scripted.Reply{Text: "VERDICT GIVEN"}
		}
		return scripted.VerdictReply("## 结论\n达成", "achieved",
			[]scripted.Check{{Check: "it works", Passed: true, Evidence: "ran it"}}, nil, "every check passed")
	}}}}
}

// BenchmarkStepVerdict: the typed verdict on a judge step. `flower step
// --role judge` (--json-schema with flow.VerdictSchema, the model
// answering through StructuredOutput) against a bare `claude -p
// --json-schema <the same schema>` on the same script, both printing
// text as a user runs them. Every run's output is checked for the typed
// verdict.
func BenchmarkStepVerdict(b *testing.B) {
	bed, flower, hook, runDir := stepBenchWith(b, verdictScript())
	compareSteps(b, "StepVerdict", runDir,
		stepKind{"bare claude -p --json-schema", `"verdict":"achieved"`, func() *exec.Cmd {
			return bed.Command(testbed.Context(b), "-p", "--json-schema="+flow.VerdictSchema, "judge it")
		}},
		stepKind{"flower step --role judge", `"verdict":"achieved"`, func() *exec.Cmd {
			return flowerStep(b, bed, flower, hook, runDir, "--role", "judge", "judge it")
		}})
}

// stepKind is one kind of process a step benchmark times: its label, a
// string its output must hold, and how to make the command.
type stepKind struct {
	label, want string
	cmd         func() *exec.Cmd
}

// compareSteps times bare and step, interleaved, at least minPairs of
// each, every output checked; it prints both medians of wall and of CPU
// time, their ratios (target ≤ 1.05), the ratio over each half of the
// pairs (its stability) and the phases of the flower step (stepPhases);
// every 10 pairs it prints the figures so far.
func compareSteps(b *testing.B, name, runDir string, bare, step stepKind) {
	run := func(k stepKind) sample {
		cmd := k.cmd()
		start := time.Now()
		out, err := cmd.CombinedOutput()
		d := time.Since(start)
		if err != nil || !strings.Contains(string(out), k.want) {
			b.Fatalf("%s: %v, output lacks %q:\n%s", k.label, err, k.want, out)
		}
		return sample{d, cpuOf(cmd)}
	}
	// Warm the page cache and the run dir (the first step makes the store).
	run(bare)
	run(step)
	var bt, st []sample
	var phases []map[string]time.Duration
	n := pairs(b)
	b.ResetTimer()
	interleave(n,
		func() { bt = append(bt, run(bare)) },
		func() {
			began := time.Now()
			st = append(st, run(step))
			phases = append(phases, stepPhases(b, runDir, began, began.Add(st[len(st)-1].wall)))
			if len(st)%10 == 0 && len(st) < n {
				printPair(name+" so far", "", len(st), bare.label, step.label, bt, st)
			}
		})
	b.StopTimer()
	perPair(b, n)
	reportPair(b, name, "", n, bare.label, step.label, bt, st)
	reportPhases(b, phases)
}

// sample is one timed process: its wall time and the CPU time of its
// whole tree.
type sample struct{ wall, cpu time.Duration }

// cpuOf is the CPU time (user and system) cmd's process used, with every
// descendant reaped below it (wait4's rusage): the figure a loaded machine
// inflates least.
func cpuOf(cmd *exec.Cmd) time.Duration {
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

func walls(s []sample) []time.Duration {
	return sampled(s, func(x sample) time.Duration { return x.wall })
}
func cpus(s []sample) []time.Duration {
	return sampled(s, func(x sample) time.Duration { return x.cpu })
}

func sampled(s []sample, f func(sample) time.Duration) []time.Duration {
	out := make([]time.Duration, len(s))
	for i, x := range s {
		out[i] = f(x)
	}
	return out
}

// ratioOf is median(c)/median(a).
func ratioOf(a, c []time.Duration) float64 { return median(c).Seconds() / median(a).Seconds() }

// reportPair reports and prints the figures of a (the bare baseline) and
// c; prefix names c's metrics.
func reportPair(b *testing.B, name, prefix string, n int, la, lc string, a, c []sample) {
	b.ReportMetric(median(walls(a)).Seconds(), "bare-s")
	b.ReportMetric(median(walls(c)).Seconds(), prefix+"step-s")
	b.ReportMetric(ratioOf(walls(a), walls(c)), prefix+"ratio")
	b.ReportMetric(ratioOf(cpus(a), cpus(c)), prefix+"cpu-ratio")
	printPair(name, prefix, n, la, lc, a, c)
}

// printPair prints the medians of wall and CPU time of a and c, their
// ratios, and the wall ratio over each half of the pairs.
func printPair(name, prefix string, n int, la, lc string, a, c []sample) {
	m := min(len(a), len(c)) // so far, one kind may be a run ahead
	wa, wc, ca, cc := walls(a[:m]), walls(c[:m]), cpus(a[:m]), cpus(c[:m])
	h := m / 2
	fmt.Fprintf(os.Stderr, "%s: %d pairs, %s %.0f ms, %s %.0f ms (wall p50), ratio %.3f (target <= 1.05); halves %.3f, %.3f; "+
		"CPU p50 %.0f ms vs %.0f ms, ratio %.3f\n",
		name, n, la, median(wa).Seconds()*1000, lc, median(wc).Seconds()*1000, ratioOf(wa, wc),
		ratioOf(wa[:h], wc[:h]), ratioOf(wa[h:], wc[h:]), median(ca).Seconds()*1000, median(cc).Seconds()*1000, ratioOf(ca, cc))
}

// reportPhases prints the median of each phase of the flower steps.
func reportPhases(b *testing.B, phases []map[string]time.Duration) {
	for _, ph := range phaseNames {
		var d []time.Duration
		for _, p := range phases {
			d = append(d, p[ph[0]])
		}
		b.ReportMetric(median(d).Seconds()*1000, ph[0]+"-ms")
		fmt.Fprintf(os.Stderr, "  %-7s %6.1f ms  %s\n", ph[0], median(d).Seconds()*1000, ph[1])
	}
}

// stepBenchWith is stepBench on script s.
func stepBenchWith(b *testing.B, s *scripted.Script) (bed *testbed.Bed, flower, hook, runDir string) {
	bed = testbed.New(b, s)
	return bed, testbed.BuildBinary(b, "./cmd/flower"), testbed.BuildBinary(b, "./cmd/flower-hook"),
		filepath.Join(filepath.Dir(bed.Workspace), "runs")
}

// BenchmarkStepFollowed (issue 34 item 4: following a flow costs the flow
// nothing measurable): the trivial step of StepVsBare three ways,
// interleaved — bare `claude -p`, `flower step` alone, and `flower step`
// while `flower runs show --watch` and a `flower ui` page's server-sent
// events follow it. The followers start as soon as the step's run has its
// events log and follow it to its end (each is checked to have seen the
// end: watch prints "ended", the stream sends "end"); the page's side
// fetches the run's body again on each message, as its script does. It
// prints each median and the ratios followed/bare, alone/bare and
// followed/alone.
func BenchmarkStepFollowed(b *testing.B) {
	bed, flower, hook, runDir := stepBench(b)
	run := func(cmd *exec.Cmd) sample {
		d := timedRun(b)(cmd)
		return sample{d, cpuOf(cmd)}
	}
	run(bareClaude(b, bed))
	run(flowerStep(b, bed, flower, hook, runDir, "hi"))
	var bare, alone, followed []sample
	var watchCPU, uiCPU []time.Duration
	n := pairs(b)
	b.ResetTimer()
	interleave(n,
		func() { bare = append(bare, run(bareClaude(b, bed))) },
		func() { alone = append(alone, run(flowerStep(b, bed, flower, hook, runDir, "hi"))) },
		func() {
			s, w, u := followedStep(b, bed, flower, hook, runDir)
			followed, watchCPU, uiCPU = append(followed, s), append(watchCPU, w), append(uiCPU, u)
			if len(followed)%10 == 0 && len(followed) < n {
				printFollowed(len(followed), bare, alone, followed, watchCPU, uiCPU)
			}
		})
	b.StopTimer()
	perPair(b, n)
	reportPair(b, "StepFollowed", "followed-", n, "bare claude -p", "flower step followed", bare, followed)
	reportPair(b, "StepAlone", "alone-", n, "bare claude -p", "flower step alone", bare, alone)
	b.ReportMetric(ratioOf(walls(alone), walls(followed)), "followed/alone")
	printFollowed(n, bare, alone, followed, watchCPU, uiCPU)
}

// printFollowed prints the followed step against the step alone, and the
// followers' own CPU time.
func printFollowed(n int, bare, alone, followed []sample, watchCPU, uiCPU []time.Duration) {
	printPair("StepFollowed", "", n, "bare claude -p", "flower step followed", bare, followed)
	printPair("StepAlone", "", n, "bare claude -p", "flower step alone", bare, alone)
	printPair("followed vs alone", "", n, "alone", "followed", alone, followed)
	fmt.Fprintf(os.Stderr, "  followers' CPU p50: runs show --watch %.0f ms, flower ui (start, the stream, the body fetches, exit) %.0f ms\n",
		median(watchCPU).Seconds()*1000, median(uiCPU).Seconds()*1000)
}

// followedStep runs one `flower step hi` while a watch and a ui page
// follow it, and returns the step's sample and the CPU time of the watch
// and of the ui server; it waits for both followers to end (untimed)
// before it returns. The ui serves already when the step starts (each step
// gets one of its own: a child of a benchmark lives at most testbed.Cap).
func followedStep(b *testing.B, bed *testbed.Bed, flower, hook, runDir string) (step sample, watchCPU, uiCPU time.Duration) {
	ui, server := startUI(b, flower, bed, runDir)
	before := runsIn(runDir)
	cmd := flowerStep(b, bed, flower, hook, runDir, "hi")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	var run string
	testbed.Await(b, "the step's manifest row and events log", func() bool {
		for r := range runsIn(runDir) {
			if !before[r] {
				run = r
			}
		}
		return run != ""
	})
	watch := testbed.Command(b, flower, "runs", "show", "-C", bed.Workspace, "--run-dir", runDir, "--watch", run)
	watch.Env, watch.Dir = bed.Env(), bed.Workspace
	var watched strings.Builder
	watch.Stdout, watch.Stderr = &watched, &watched
	if err := watch.Start(); err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	var streamed string
	wg.Add(1)
	go func() { defer wg.Done(); streamed = ui.follow(run) }()
	if err := cmd.Wait(); err != nil {
		b.Fatalf("flower step: %v\n%s", err, out.String())
	}
	step = sample{time.Since(start), cpuOf(cmd)}
	werr := watch.Wait()
	wg.Wait()
	server.Process.Signal(os.Interrupt)
	server.Wait()
	if werr != nil || !strings.Contains(watched.String(), "ended") {
		b.Fatalf("runs show --watch: %v\n%s", werr, watched.String())
	}
	if !strings.Contains(streamed, "event: end") {
		b.Fatalf("the ui's stream of %s did not end:\n%s", run, streamed)
	}
	return step, cpuOf(watch), cpuOf(server)
}

// runsIn is the set of runs in runDir's manifest that have an events log
// (what a follower can find).
func runsIn(runDir string) map[string]bool {
	rows, _ := harness.ReadManifest(filepath.Join(runDir, "manifest.json"))
	out := map[string]bool{}
	for _, r := range rows {
		if _, err := os.Stat(filepath.Join(runDir, r.Run, "events.jsonl")); err == nil {
			out[r.Run] = true
		}
	}
	return out
}

// uiClient is a browser's part of a `flower ui` page: a cookie from the
// printed URL, the live stream, the body fetched again on each message.
type uiClient struct {
	base, token string
	http        *http.Client
}

// startUI starts `flower ui` on runDir and returns a client of it and the
// server's command.
func startUI(b *testing.B, flower string, bed *testbed.Bed, runDir string) (*uiClient, *exec.Cmd) {
	cmd := testbed.Command(b, flower, "ui", "-C", bed.Workspace, "--run-dir", runDir)
	cmd.Env, cmd.Dir = bed.Env(), bed.Workspace
	stdout, _ := testbed.Start(b, cmd)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("flower ui printed no URL: %v", err)
	}
	_, u, ok := strings.Cut(strings.TrimSpace(line), "flower ui: ")
	base, token, ok2 := strings.Cut(u, "/?token=")
	if !ok || !ok2 {
		b.Fatalf("flower ui printed %q", line)
	}
	jar, _ := cookiejar.New(nil)
	c := &uiClient{base: base, token: token, http: &http.Client{Jar: jar}}
	resp, err := c.http.Get(u) // the token becomes a cookie
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	return c, cmd
}

// follow reads run's live stream to its end, fetching the run's body
// again after each message (one fetch at a time, as the page's script
// does), and returns what the stream sent.
func (c *uiClient) follow(run string) string {
	resp, err := c.http.Get(c.base + "/run/" + run + "/live")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	news := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range news {
			if r, err := c.http.Get(c.base + "/run/" + run + "/body"); err == nil {
				io.Copy(io.Discard, r.Body)
				r.Body.Close()
			}
		}
	}()
	var sent strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		sent.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "data:") {
			select {
			case news <- struct{}{}:
			default: // a fetch is due already
			}
		}
	}
	close(news)
	<-done
	return sent.String()
}
