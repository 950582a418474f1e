package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// connectTimeout bounds the first connection when the URL sets none.
const connectTimeout = 10 * time.Second

// quietLogger drops River's own log lines; fleet says what matters itself.
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// AddOptions are where and how a flow is queued.
type AddOptions struct {
	Queue       string // default DefaultQueue
	MaxAttempts int    // default DefaultMaxAttempts
}

// Add queues a flow and returns its job id. With a Key, a job of the same
// key that is not finished yet is returned instead (dup true).
func (f *Fleet) Add(ctx context.Context, a FlowArgs, o AddOptions) (id int64, dup bool, err error) {
	if err := a.Validate(); err != nil {
		return 0, false, err
	}
	opts := &river.InsertOpts{Queue: o.Queue, MaxAttempts: o.MaxAttempts}
	if opts.Queue == "" {
		opts.Queue = DefaultQueue
	}
	if opts.MaxAttempts == 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	if a.Key != "" {
		opts.UniqueOpts = river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
			rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
			rivertype.JobStateRunning, rivertype.JobStateScheduled}}
	}
	res, err := f.client.Insert(ctx, a, opts)
	if err != nil {
		return 0, false, fmt.Errorf("queue add: %w", err)
	}
	return res.Job.ID, res.UniqueSkippedAsDuplicate, nil
}

// Job is one queued flow as `flower queue ls` shows it: River's state and
// attempt, and what its latest attempt ran (worker, run, workspace,
// verdict).
type Job struct {
	ID          int64  `json:"id"`
	State       string `json:"state"`
	Attempt     int    `json:"attempt"`
	MaxAttempts int    `json:"max_attempts"`
	Queue       string `json:"queue"`
	Ran
	Ask         string    `json:"ask"`
	CreatedAt   string    `json:"created_at"`
	FinalizedAt string    `json:"finalized_at"`
	Args        FlowArgs  `json:"args"`
	Errors      []string  `json:"errors"`
	Attempts    []Attempt `json:"attempts"`
	TakenOver   int       `json:"taken_over"`
	// Note says why a job is not running or how it ended when its state
	// alone does not: waiting for a busy workspace, retried after an
	// infrastructure failure (not a verdict), cancelled and why.
	Note      string     `json:"note"`
	finalized *time.Time `json:"-"`
	waiting   string
}

// Ran is what one attempt ran: on which worker, its run and workspace,
// and how it ended.
type Ran struct {
	Worker    string  `json:"worker"`
	Run       string  `json:"run"`
	Workspace string  `json:"workspace"`
	Verdict   string  `json:"verdict"`
	Error     string  `json:"error"`
	CostUSD   float64 `json:"cost_usd"`
}

// Attempt is one attempt of a flow on one worker.
type Attempt struct {
	Attempt int `json:"attempt"`
	Ran
	StartedAt string `json:"started_at"`
	EndedAt   string `json:"ended_at"`
}

// ErrNoJob is returned by Get and Cancel for an id that is not a flow job.
var ErrNoJob = errors.New("no such flow job")

const jobColumns = `j.id, j.state::text, j.attempt, j.max_attempts, j.queue, coalesce(j.attempted_by[array_upper(j.attempted_by, 1)], ''),
	j.args, j.created_at, j.finalized_at, j.errors, coalesce((j.metadata->>'flower:takeovers')::int, 0),
	coalesce(j.metadata->'output'->>'note', '')`

// List returns every flow job, oldest first, with its attempts.
func (f *Fleet) List(ctx context.Context) ([]Job, error) {
	rows, err := f.pool.Query(ctx, "SELECT "+jobColumns+" FROM river_job j WHERE j.kind = $1 ORDER BY j.id", Kind)
	if err != nil {
		return nil, fmt.Errorf("queue ls: %w", err)
	}
	jobs, err := pgx.CollectRows(rows, scanJob)
	if err != nil {
		return nil, fmt.Errorf("queue ls: %w", err)
	}
	if err := f.attachAttempts(ctx, jobs); err != nil {
		return nil, fmt.Errorf("queue ls: %w", err)
	}
	return jobs, nil
}

// Get returns one flow job with its attempts.
func (f *Fleet) Get(ctx context.Context, id int64) (Job, error) {
	rows, err := f.pool.Query(ctx, "SELECT "+jobColumns+" FROM river_job j WHERE j.kind = $1 AND j.id = $2", Kind, id)
	if err != nil {
		return Job{}, fmt.Errorf("queue show %d: %w", id, err)
	}
	jobs, err := pgx.CollectRows(rows, scanJob)
	if err != nil {
		return Job{}, fmt.Errorf("queue show %d: %w", id, err)
	}
	if len(jobs) == 0 {
		return Job{}, fmt.Errorf("queue: job %d: %w in %s", id, ErrNoJob, f.shown)
	}
	if err := f.attachAttempts(ctx, jobs); err != nil {
		return Job{}, fmt.Errorf("queue show %d: %w", id, err)
	}
	return jobs[0], nil
}

func scanJob(row pgx.CollectableRow) (Job, error) {
	var j Job
	var args []byte
	var created time.Time
	var errs [][]byte
	if err := row.Scan(&j.ID, &j.State, &j.Attempt, &j.MaxAttempts, &j.Queue, &j.Worker, &args, &created, &j.finalized, &errs, &j.TakenOver, &j.waiting); err != nil {
		return j, err
	}
	if err := json.Unmarshal(args, &j.Args); err != nil {
		return j, fmt.Errorf("job %d: args: %w", j.ID, err)
	}
	j.Ask, j.CreatedAt, j.Errors, j.Attempts = j.Args.Ask, rfc3339(&created), []string{}, []Attempt{}
	j.FinalizedAt = rfc3339(j.finalized)
	for _, e := range errs {
		var ae rivertype.AttemptError
		if json.Unmarshal(e, &ae) == nil {
			j.Errors = append(j.Errors, fmt.Sprintf("attempt %d: %s", ae.Attempt, firstLine(ae.Error)))
		}
	}
	j.Note = jobNote(j)
	return j, nil
}

// jobNote is Job.Note for j's state, its recorded note and its errors.
func jobNote(j Job) string {
	last := ""
	if n := len(j.Errors); n > 0 {
		last = j.Errors[n-1]
		if _, after, ok := strings.Cut(last, ": "); ok {
			last = after
		}
	}
	switch j.State {
	case "scheduled", "available", "retryable":
		if j.waiting != "" && j.State != "retryable" {
			return "waiting: " + j.waiting
		}
		if last != "" {
			return "retried (infrastructure, not a verdict): " + last
		}
	case "cancelled":
		return "cancelled: " + cmpOr(last, "flower queue cancel")
	case "discarded":
		return "gave up: " + last
	}
	return ""
}

// attachAttempts fills each job's attempts and, from its latest, the
// worker, run, workspace, verdict, error and cost.
func (f *Fleet) attachAttempts(ctx context.Context, jobs []Job) error {
	if len(jobs) == 0 {
		return nil
	}
	ids := make([]int64, len(jobs))
	at := map[int64]*Job{}
	for i := range jobs {
		ids[i], at[jobs[i].ID] = jobs[i].ID, &jobs[i]
	}
	rows, err := f.pool.Query(ctx, `SELECT job_id, attempt, worker, run, workspace, verdict, error, cost_usd, started_at, ended_at
		FROM flower_flow_attempts WHERE job_id = ANY($1) ORDER BY job_id, started_at`, ids)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var a Attempt
		var started time.Time
		var ended *time.Time
		if err := rows.Scan(&id, &a.Attempt, &a.Worker, &a.Run, &a.Workspace, &a.Verdict, &a.Error, &a.CostUSD, &started, &ended); err != nil {
			return err
		}
		a.StartedAt, a.EndedAt = rfc3339(&started), rfc3339(ended)
		j := at[id]
		j.Attempts = append(j.Attempts, a)
		j.Ran = a.Ran
	}
	return rows.Err()
}

// Cancel cancels a flow job: one not started yet never runs, a running one
// is stopped (its worker is told through the database and interrupts the
// flow) and recorded cancelled. It returns the job's state after the call.
func (f *Fleet) Cancel(ctx context.Context, id int64) (string, error) {
	if _, err := f.Get(ctx, id); err != nil {
		return "", err
	}
	row, err := f.client.JobCancel(ctx, id)
	if err != nil {
		return "", fmt.Errorf("queue cancel %d: %w", id, err)
	}
	return string(row.State), nil
}

func rfc3339(t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
