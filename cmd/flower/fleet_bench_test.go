package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/flowerhq/flower/fleet"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// BenchmarkWorkerOverhead: the same scripted starter flow (clarify, goal,
// work with one delegation, judge) run as `flower "…"` in a fresh clone and
// as a queued flow on an idle `flower worker` (one flow at a time, the same
// store), in turns. direct-ms is the flower process's wall time; queued-ms
// runs from the enqueue to the job completed (seen by polling every 20 ms:
// the clone, River's pick-up, the documents kept in the store, the
// recording of the attempt); overhead-ms is the difference of the medians.
func BenchmarkWorkerOverhead(b *testing.B) {
	fb := newFleetBed(b, func(scripted.Request) int { return 0 })
	m := fb.machine("m1")
	w := fb.worker(m, "--rescue-after", "1m")
	defer stopWorker(b, w)
	f, err := fleet.Open(context.Background(), fb.store)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var direct, queued []time.Duration
	b.ResetTimer()
	for i := range b.N {
		ws := filepath.Join(b.TempDir(), "ws")
		if out, err := exec.Command("git", "clone", "-q", fb.repo, ws).CombinedOutput(); err != nil {
			b.Fatalf("%v %s", err, out)
		}
		run := func() {
			cmd := testbed.Command(b, fb.bin, "--json", "--timeout", "0", "--no-self-test", "--run-dir", m.runDir, "-C", ws, fmt.Sprintf("FLOW-%d 写 ok.txt", 1000+i))
			cmd.Env, cmd.Dir = fb.env(m), ws
			t0 := time.Now()
			if out, errOut, code := testbed.Exec(b, cmd); code != 0 {
				b.Fatalf("flower: exit %d\n%s\n%s", code, tailOf([]byte(out)), errOut)
			}
			direct = append(direct, time.Since(t0))
		}
		queue := func() {
			t0 := time.Now()
			id, _, err := f.Add(context.Background(), fleet.FlowArgs{Ask: fmt.Sprintf("FLOW-%d 写 ok.txt", i), Repo: fb.repo}, fleet.AddOptions{})
			if err != nil {
				b.Fatal(err)
			}
			for {
				j, err := f.Get(context.Background(), id)
				if err != nil {
					b.Fatal(err)
				}
				if j.State == "completed" {
					break
				}
				if j.State != "available" && j.State != "running" {
					b.Fatalf("job %d: %+v", id, j)
				}
				time.Sleep(20 * time.Millisecond)
			}
			queued = append(queued, time.Since(t0))
		}
		if i%2 == 0 {
			run()
			queue()
		} else {
			queue()
			run()
		}
	}
	b.StopTimer()
	med := func(d []time.Duration) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[len(s)/2].Microseconds()) / 1000
	}
	b.ReportMetric(med(direct), "direct-ms")
	b.ReportMetric(med(queued), "queued-ms")
	b.ReportMetric(med(queued)-med(direct), "overhead-ms")
}
