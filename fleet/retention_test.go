package fleet

import (
	"context"
	"testing"
	"time"

	"github.com/flowerhq/flower/testkit/testbed"
)

// finishedAgo marks job id completed, finalized ago.
func finishedAgo(t *testing.T, f *Fleet, id int64, ago time.Duration) {
	t.Helper()
	if _, err := f.pool.Exec(context.Background(), `UPDATE river_job SET state = 'completed', attempt = 1, attempted_at = now() - $2::interval,
		finalized_at = now() - $2::interval WHERE id = $1`, id, interval(ago)); err != nil {
		t.Fatal(err)
	}
}

// listed reports whether the queue still lists job id.
func listed(t *testing.T, f *Fleet, id int64) bool {
	t.Helper()
	jobs, err := f.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.ID == id {
			return true
		}
	}
	return false
}

// attempts counts job id's attempt rows.
func attempts(t *testing.T, f *Fleet, id int64) int {
	t.Helper()
	var n int
	if err := f.pool.QueryRow(context.Background(), `SELECT count(*) FROM flower_flow_attempts WHERE job_id = $1`, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFinishedFlowsKeptForKeepFinished: a worker's cleaner keeps a flow
// that finished two days ago (River alone forgets it after 24 hours) and
// deletes one that finished 60 days ago, which shows the cleaner ran, and
// then its attempt rows (a listed flow keeps its own).
// Control: with KeepFinished one hour the two-day-old flow goes too.
func TestFinishedFlowsKeptForKeepFinished(t *testing.T) {
	for _, c := range []struct {
		name       string
		keep       time.Duration
		twoDaysOld bool // still listed
	}{
		{"default", 0, true},
		{"control: one hour", time.Hour, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := open(t)
			recent, old := add(t, f, "two days ago"), add(t, f, "sixty days ago")
			finishedAgo(t, f, recent, 48*time.Hour)
			finishedAgo(t, f, old, 60*24*time.Hour)
			for _, id := range []int64{recent, old} {
				if _, err := f.pool.Exec(context.Background(), `INSERT INTO flower_flow_attempts (job_id, attempt, worker, verdict) VALUES ($1, 1, 'w0', 'achieved')`, id); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				done <- f.Work(ctx, WorkOptions{ID: "cleaner", KeepFinished: c.keep, PollInterval: 100 * time.Millisecond, RescueAfter: time.Second,
					Runner: func(context.Context, *FlowRun) (Outcome, error) { return Outcome{Verdict: "achieved"}, nil }})
			}()
			testbed.Await(t, "the 60-day-old flow deleted by the cleaner", func() bool { return !listed(t, f, old) })
			testbed.Await(t, "the deleted flow's attempt rows deleted", func() bool { return attempts(t, f, old) == 0 })
			if !c.twoDaysOld {
				testbed.Await(t, "the two-day-old flow deleted", func() bool { return !listed(t, f, recent) })
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if got := listed(t, f, recent); got != c.twoDaysOld {
				t.Errorf("the flow finished two days ago listed = %v, want %v", got, c.twoDaysOld)
			}
			if c.twoDaysOld && attempts(t, f, recent) != 1 {
				t.Error("a listed flow lost its attempt row")
			}
		})
	}
}
