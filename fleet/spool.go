package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/flowerhq/flower/internal/atomicfile"
	"github.com/flowerhq/flower/sessionstore"
)

// spooled is an attempt's end record that could not reach the database
// within its deadline: kept in a private file of the worker's spool
// folder and replayed, under the same token, when a worker starts there.
type spooled struct {
	JobID   int64   `json:"job_id"`
	Attempt int     `json:"attempt"`
	Worker  string  `json:"worker"`
	Fence   token   `json:"fence"`
	Outcome Outcome `json:"outcome"`
	// Complete: the attempt ended with a verdict, so its replay completes
	// the job too (in the same fenced transaction), as end would have.
	Complete bool `json:"complete,omitempty"`
}

// completeSQL completes a job whose end was spooled with a verdict, with
// the output River's completer would have recorded: the job is still this
// attempt's (running, or rescued but not yet taken: the caller holds the
// current token), so the flow is not run again.
const completeSQL = `UPDATE river_job SET state = 'completed', finalized_at = now(),
		metadata = jsonb_set(metadata, '{output}', $3::jsonb) WHERE id = $1 AND attempt = $2 AND state IN ('running', 'retryable')`

const endSQL = `UPDATE flower_flow_attempts SET run = coalesce(nullif($4, ''), run), workspace = coalesce(nullif($5, ''), workspace),
		verdict = $6, error = $7, cost_usd = $8, ended_at = now() WHERE job_id = $1 AND attempt = $2 AND worker = $3`

// spool writes s into dir (0600 in a 0700 folder).
func spool(dir string, s spooled) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	b, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, fmt.Sprintf("job-%d-attempt-%d-%d.json", s.JobID, s.Attempt, s.Fence.Epoch))
	return p, atomicfile.Write(p, b, 0o600)
}

// replay writes every spooled record of dir under its token and removes
// it. A record whose token went stale is still the attempt's own while its
// attempt row is open (the job was retried by River before the record got
// in, not taken over: a takeover ends the row): its row is written, but
// the job is not completed (it is no longer this attempt's). One whose
// row a takeover ended is dropped and said. Records that still cannot be
// written stay.
func replay(ctx context.Context, pool *pgxpool.Pool, dir string, logf func(string, ...any)) {
	files, _ := filepath.Glob(filepath.Join(dir, "job-*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		var s spooled
		if err != nil || json.Unmarshal(b, &s) != nil {
			continue
		}
		o := s.Outcome
		current := true
		err = fencedOwn(ctx, pool, s.JobID, s.Fence, func(tx pgx.Tx, cur bool) error {
			current = cur
			if _, err := tx.Exec(ctx, endSQL, s.JobID, s.Attempt, s.Worker, o.Run, o.Workspace, o.Verdict, o.Error, o.CostUSD); err != nil || !s.Complete || !cur {
				return err
			}
			output, err := json.Marshal(recorded{Outcome: o, Fence: s.Fence})
			if err != nil {
				return err
			}
			_, err = tx.Exec(ctx, completeSQL, s.JobID, s.Attempt, output)
			return err
		})
		switch {
		case err == nil && current:
			logf("replayed the spooled end of job %d attempt %d (%s)", s.JobID, s.Attempt, cmpOr(o.Verdict, o.Error))
		case err == nil:
			logf("replayed the spooled end of job %d attempt %d (%s) as its record only: the flow was retried since", s.JobID, s.Attempt, cmpOr(o.Verdict, o.Error))
		case errors.Is(err, ErrStale):
			logf("dropped the spooled end of job %d attempt %d: the flow was taken over since", s.JobID, s.Attempt)
		default:
			continue
		}
		os.Remove(f)
	}
}

// storeLabel is what an attempt's session-store outbox keeps with each
// spooled write: the job and the attempt's token.
type storeLabel struct {
	Job   int64 `json:"job"`
	Fence token `json:"fence"`
}

// storeSpool is the folder of the session stores' spooled writes.
func storeSpool(spoolDir string) string { return filepath.Join(spoolDir, "store") }

// storeOutbox is an attempt's outbox (FlowRun.StoreOutbox).
func storeOutbox(o WorkOptions, job int64, tok token) sessionstore.OutboxOptions {
	label, _ := json.Marshal(storeLabel{Job: job, Fence: tok})
	ob := sessionstore.OutboxOptions{Patience: o.RescueAfter, Label: label}
	if o.SpoolDir != "" {
		ob.Dir = storeSpool(o.SpoolDir)
	}
	return ob
}

// replaySpools makes what the worker's spool folder holds: the attempts'
// ends (replay) and their session stores' writes, each under its token.
func (f *Fleet) replaySpools(ctx context.Context, o WorkOptions) {
	if o.SpoolDir == "" {
		return
	}
	logf := func(format string, a ...any) { o.Logf("worker %s: "+format, append([]any{o.ID}, a...)...) }
	// The store's writes first: while the attempt's end is not yet made,
	// its row is open, which is what lets an attempt retried since (not
	// taken over) still make its own records (replayFence).
	f.replayStore(ctx, o, logf)
	replay(ctx, f.pool, o.SpoolDir, logf)
}

// replayStore makes the session stores' spooled writes, each under its
// attempt's replayFence.
func (f *Fleet) replayStore(ctx context.Context, o WorkOptions, logf func(string, ...any)) {
	dir := storeSpool(o.SpoolDir)
	if files, _ := filepath.Glob(filepath.Join(dir, "outbox-*.jsonl")); len(files) == 0 {
		return
	}
	st, err := sessionstore.OpenURL(ctx, f.raw)
	if err != nil {
		logf("the session store's spooled writes wait: %v", err)
		return
	}
	defer st.Close()
	made, refused, err := st.ReplayOutbox(ctx, dir, func(label json.RawMessage) sessionstore.FenceFunc {
		var l storeLabel
		if json.Unmarshal(label, &l) != nil || l.Job == 0 {
			return nil
		}
		return replayFence(l.Job, l.Fence)
	})
	logf("made %d spooled writes of the session store; %d refused (their flows were taken over since)", made, refused)
	if err != nil {
		logf("the rest of the session store's spooled writes wait: %v", err)
	}
}
