package fleet

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/flowerhq/flower/testkit/testbed"
)

// BenchmarkQueueLatency: enqueue → start latency of 100 trivial flow jobs
// taken by 4 workers (each its own River client and lease, one flow at a
// time, River's default 1 s poll; inserts wake the workers through
// LISTEN/NOTIFY). Reports p50 and p99 in milliseconds over all jobs of all
// iterations.
func BenchmarkQueueLatency(b *testing.B) {
	for _, cd := range []time.Duration{DefaultFetchCooldown, 100 * time.Millisecond} {
		b.Run(fmt.Sprintf("cooldown=%s/burst100", cd), func(b *testing.B) { benchLatency(b, 100, cd) })
		// One job at a time onto idle workers: the pick-up latency alone.
		b.Run(fmt.Sprintf("cooldown=%s/one-by-one", cd), func(b *testing.B) { benchLatency(b, 1, cd) })
	}
}

// benchLatency enqueues batch jobs at once, waits for all to start, 100/batch
// times per iteration.
func benchLatency(b *testing.B, batch int, cooldown time.Duration) {
	f := open(b)
	var mu sync.Mutex
	added := sync.NewCond(&mu) // an Add has returned and its time is in enq
	enq := map[int64]time.Time{}
	var lat []time.Duration
	done := make(chan struct{}, 100)
	runner := func(ctx context.Context, r *FlowRun) (Outcome, error) {
		now := time.Now()
		mu.Lock()
		t0, ok := enq[r.JobID]
		for !ok { // Add has not returned yet
			added.Wait()
			t0, ok = enq[r.JobID]
		}
		lat = append(lat, now.Sub(t0))
		mu.Unlock()
		done <- struct{}{}
		return Outcome{Verdict: "achieved"}, nil
	}
	var stops []func()
	for i := range 4 {
		stops = append(stops, workCooldown(b, f, fmt.Sprintf("w%d", i), cooldown, runner))
	}
	defer func() {
		for _, s := range stops {
			s()
		}
	}()
	// The workers are up (four live leases) and one flow went through.
	testbed.Await(b, "four workers", func() bool {
		var n int
		f.pool.QueryRow(context.Background(), "SELECT count(*) FROM flower_workers WHERE expires_at > now()").Scan(&n)
		return n == 4
	})
	enqueue := func(ask string) {
		t0 := time.Now()
		id, _, err := f.Add(context.Background(), FlowArgs{Ask: ask, Workspace: "/w"}, AddOptions{})
		if err != nil {
			b.Fatal(err)
		}
		mu.Lock()
		enq[id] = t0
		added.Broadcast()
		mu.Unlock()
	}
	enqueue("warm-up")
	<-done
	mu.Lock()
	lat = lat[:0]
	mu.Unlock()
	b.ResetTimer()
	for range b.N {
		for j := range 100 {
			if j%batch == 0 && j > 0 {
				for range batch {
					<-done
				}
			}
			enqueue(fmt.Sprint("trivial ", j))
		}
		for range batch {
			<-done
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// workCooldown runs a quiet worker with River's fetch cooldown cd.
func workCooldown(b *testing.B, f *Fleet, id string, cd time.Duration, runner Runner) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- f.Work(ctx, WorkOptions{ID: id, RescueAfter: time.Minute, Grace: time.Minute, FetchCooldown: cd, Runner: runner})
	}()
	return func() {
		cancel()
		if err := <-done; err != nil {
			b.Errorf("work %s: %v", id, err)
		}
	}
}
