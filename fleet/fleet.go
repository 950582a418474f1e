package fleet

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/flowerhq/flower/sessionstore"
)

// Kind is the River job kind of a queued flow.
const Kind = "flower_flow"

// DefaultQueue is the queue Add and Work use when none is named.
const DefaultQueue = river.QueueDefault

// DefaultMaxAttempts bounds how often an infrastructure failure is retried.
const DefaultMaxAttempts = 5

// poolConns is the connection pool's size unless the URL sets
// pool_max_conns.
const poolConns = 16

// fleetLock is the advisory lock key of the first Open's migrations.
const fleetLock = 0x666c6f776572_10 // "flower" 10

// Fleet is an open connection to the queue's database.
type Fleet struct {
	pool   *pgxpool.Pool
	client *river.Client[pgx.Tx] // insert and cancel only; Work makes its own
	shown  string                // the URL with its password masked
	raw    string                // the URL (never shown): the session store's replays open it
}

// FlowArgs is a queued flow: the ask, where it runs (Repo, cloned into a
// fresh workspace by the worker, or Workspace, a path every worker sees)
// and the starter's options.
type FlowArgs struct {
	Ask          string  `json:"ask"`
	Repo         string  `json:"repo,omitempty"`
	Ref          string  `json:"ref,omitempty"`
	Workspace    string  `json:"workspace,omitempty"`
	Rounds       int     `json:"rounds,omitempty"`
	Isolate      bool    `json:"isolate,omitempty"`
	NoGoal       bool    `json:"no_goal,omitempty"`
	JudgeCanRun  bool    `json:"judge_can_run,omitempty"`
	Model        string  `json:"model,omitempty"`
	Instructions string  `json:"instructions,omitempty"`
	MaxBudgetUSD float64 `json:"max_budget_usd,omitempty"`
	// Key, when set, makes the job unique: a second Add with the same key
	// while the first is not finished returns the first job.
	Key string `json:"key,omitempty" river:"unique"`
}

// Kind is River's job kind.
func (FlowArgs) Kind() string { return Kind }

// Validate says what is wrong with a, in one line naming the fix.
func (a FlowArgs) Validate() error {
	switch {
	case strings.TrimSpace(a.Ask) == "":
		return errors.New("say what the flow should do: flower queue add \"…\"")
	case (a.Repo == "") == (a.Workspace == ""):
		return errors.New("say where the work happens: --repo URL (cloned by the worker) or --workspace PATH (a shared path), one of them")
	case a.Ref != "" && a.Repo == "":
		return errors.New("--ref needs --repo")
	case a.Workspace != "" && !filepath.IsAbs(a.Workspace):
		return fmt.Errorf("--workspace %s: give an absolute path (every worker resolves it on its own machine)", a.Workspace)
	case a.Rounds < 0 || a.MaxBudgetUSD < 0:
		return errors.New("--rounds and --max-budget-usd cannot be negative")
	}
	return nil
}

// Open connects to the PostgreSQL database rawURL names and applies River's
// and fleet's migrations on first use. Errors name the URL, password masked.
func Open(ctx context.Context, rawURL string) (*Fleet, error) {
	shown := sessionstore.MaskURL(rawURL)
	if s := strings.ToLower(rawURL); !strings.HasPrefix(s, "postgres://") && !strings.HasPrefix(s, "postgresql://") {
		return nil, fmt.Errorf("the queue needs a PostgreSQL store: --store postgres://… (or FLOWER_STORE), not %s", shown)
	}
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("queue %s: not a valid PostgreSQL URL", shown)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = connectTimeout
	}
	if _, set := cfg.ConnConfig.RuntimeParams[sessionstore.IdleTxParam]; !set {
		cfg.ConnConfig.RuntimeParams[sessionstore.IdleTxParam] = sessionstore.IdleTxTimeout // a paused worker's locks go
	}
	if !strings.Contains(rawURL, "pool_max_conns") {
		// pgxpool's default (4 on a small machine) is too few for River's
		// listener, fetches and completer beside the lease and the attempts
		// of several flows at once.
		cfg.MaxConns = poolConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("queue %s: %w", shown, err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("queue %s: %w", shown, err)
	}
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Logger: quietLogger()})
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("queue %s: %w", shown, err)
	}
	return &Fleet{pool: pool, client: client, shown: shown, raw: rawURL}, nil
}

// Close closes the connections.
func (f *Fleet) Close() { f.pool.Close() }

// URL is the database's URL with its password masked.
func (f *Fleet) URL() string { return f.shown }

// fleetSchema is fleet's own tables: the workers' leases and what each
// attempt of a flow ran (worker, run, workspace, verdict). Idempotent.
const fleetSchema = `
CREATE TABLE IF NOT EXISTS flower_workers (
    id          text        PRIMARY KEY,
    host        text        NOT NULL,
    pid         integer     NOT NULL,
    started_at  timestamptz NOT NULL DEFAULT now(),
    renewed_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    stopped_at  timestamptz
);
CREATE TABLE IF NOT EXISTS flower_flow_attempts (
    job_id     bigint           NOT NULL,
    attempt    integer          NOT NULL,
    worker     text             NOT NULL,
    run        text             NOT NULL DEFAULT '',
    workspace  text             NOT NULL DEFAULT '',
    verdict    text             NOT NULL DEFAULT '',
    error      text             NOT NULL DEFAULT '',
    cost_usd   double precision NOT NULL DEFAULT 0,
    started_at timestamptz      NOT NULL DEFAULT now(),
    ended_at   timestamptz,
    PRIMARY KEY (job_id, attempt, worker)
);`

// migrate applies River's migrations and fleet's schema under an advisory
// lock, so racing first Opens apply them once. River's migrations run one
// transaction per version (one of them adds an enum value that a later
// statement uses, which PostgreSQL refuses within one transaction).
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(fleetLock)); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", int64(fleetLock))
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: quietLogger()})
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	// Applied once: replacing the trigger or altering the tables locks
	// tables the workers write, so an Open that finds them (queue ls next
	// to busy workers) changes nothing.
	var done bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'flower_fence' AND tgrelid = to_regclass('river_job'))").Scan(&done); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if done {
		return nil
	}
	if _, err := conn.Exec(ctx, fleetSchema+fenceSchema); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}
