package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// TestEndEarlyReconciles: the end row written while claude exits stands
// when the step ends as predicted (two manifest writes: running, end), and
// is written again when the result differs or another write of the
// Runtime came in between; the row on disk is always the returned result.
func TestEndEarlyReconciles(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(r *Runtime, st *stepRun)
		writes int
	}{
		{"as predicted", func(*Runtime, *stepRun) {}, 2},
		{"cost changed after the result", func(_ *Runtime, st *stepRun) { st.stats.CostUSD += 0.5 }, 3},
		{"another write in between", func(r *Runtime, st *stepRun) {
			<-st.early.done
			<-r.stepBegins("other", 2)
		}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r := &Runtime{runDir: dir, run: "r1", workspace: dir, sessions: map[string]string{}, onEvents: map[string]func(Event){}}
			st := &stepRun{res: StepResult{Step: "s", StartedAt: 1, Errors: []string{}, Retired: []string{}}, emit: func(Event) {}}
			st.attempt = 1
			begun := r.stepBegins("s", 1)
			st.begin = func() <-chan struct{} { return begun }
			out := attemptOut{sessionID: "sid", text: "DONE"}
			r.endEarly(st, out)
			tc.change(r, st)
			st.absorb(out) // what Run does when the attempt returns
			res, err := r.endStep(st)
			if err != nil {
				t.Fatal(err)
			}
			if !res.OK || res.Text != "DONE" || res.SessionID != "sid" {
				t.Fatalf("result %+v", res)
			}
			if r.manifestSeq != tc.writes {
				t.Fatalf("%d manifest writes, want %d", r.manifestSeq, tc.writes)
			}
			rows, err := ReadManifest(filepath.Join(dir, "manifest.json"))
			if err != nil || len(rows) != 1 {
				t.Fatalf("rows %+v, %v", rows, err)
			}
			var got StepResult
			for _, g := range rows[0].Results {
				if g.Step == "s" {
					got = g
				}
			}
			if !reflect.DeepEqual(got, res) {
				t.Fatalf("the row holds\n%+v\nRun returned\n%+v", got, res)
			}
			for _, s := range rows[0].Running {
				if s.Step == "s" {
					t.Fatalf("step still listed as running: %+v", rows[0].Running)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRun_EndRowWhileClaudeExits: on the real CLI a step that ends with a
// success result writes its manifest twice (running, then the end row while
// claude exits), and the row is the returned result.
func TestRun_EndRowWhileClaudeExits(t *testing.T) {
	t.Parallel()
	rt := replyingRuntime(t, "EARLY_END")
	res, err := rt.Run(t.Context(), NewAgentSpec("main", ""), "go", RunOptions{})
	if err != nil || !res.OK || res.Text != "EARLY_END" {
		t.Fatalf("%+v %v", res, err)
	}
	if rt.manifestSeq != 2 {
		t.Fatalf("%d manifest writes; want 2 (running, and the end row written while claude exited)", rt.manifestSeq)
	}
	rows, err := ReadManifest(rt.ManifestPath())
	if err != nil || len(rows) != 1 || len(rows[0].Results) != 1 || !reflect.DeepEqual(rows[0].Results[0], res) || len(rows[0].Running) != 0 {
		t.Fatalf("manifest %+v (%v); want exactly the returned result %+v", rows, err, res)
	}
}

// TestRun_ConcurrentStepsKeepEveryRow: steps running at once in one Runtime
// each write their running and end rows (some of them early, while their
// claude exits); the row on disk ends with every result and nothing
// running, whatever order the writes came in.
func TestRun_ConcurrentStepsKeepEveryRow(t *testing.T) {
	t.Parallel()
	rt := replyingRuntime(t, "PARALLEL_OK")
	const n = 4
	results := make([]StepResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = rt.Run(t.Context(), NewAgentSpec("main", ""), "go", RunOptions{StepName: fmt.Sprintf("s%d", i)})
		}()
	}
	wg.Wait()
	rows, err := ReadManifest(rt.ManifestPath())
	if err != nil || len(rows) != 1 {
		t.Fatalf("rows %+v, %v", rows, err)
	}
	if len(rows[0].Running) != 0 || len(rows[0].Results) != n {
		t.Fatalf("row after %d concurrent steps: running %+v, %d results", n, rows[0].Running, len(rows[0].Results))
	}
	for i := range n {
		if errs[i] != nil || !results[i].OK {
			t.Fatalf("step %d: %+v %v", i, results[i], errs[i])
		}
		found := false
		for _, got := range rows[0].Results {
			found = found || reflect.DeepEqual(got, results[i])
		}
		if !found {
			t.Fatalf("step %d's result %+v is not in the row %+v", i, results[i], rows[0].Results)
		}
	}
}

// replyingRuntime is a Runtime (seed defaults, no session store) on a bed
// whose model answers every request with text; closed with the test.
func replyingRuntime(t *testing.T, text string) *Runtime {
	b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{
		{Name: "main", Func: func(scripted.Request) scripted.Reply { return scripted.Reply{Text: text} }}}})
	o := NewOptions(b.Workspace)
	o.RunDir = filepath.Join(filepath.Dir(b.Workspace), "runs")
	o.Env, o.Claude, o.HookPath = b.Env(), b.Claude, testbed.BuildBinary(t, "./cmd/flower-hook")
	rt, err := New(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}
