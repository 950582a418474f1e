package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/fleet"
	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/internal/child"
)

// workerOptions are the options of `flower worker`.
type workerOptions struct {
	Store, Queue, ID, Root, RunDir string
	Claude, Hook                   string
	Concurrency                    int
	RescueAfter, Grace             time.Duration
	KeepFinished                   time.Duration
	OnlineTimeout                  time.Duration
	NoSelfTest                     bool
	Args                           []string
}

const workerHelp = `A worker takes queued flows (flower queue add) and runs each as an
unattended starter flow: no person answers (as --timeout 0), the run is
recorded in the shared store, the verdict is the job's outcome (achieved, not
achieved or unreachable complete it; an infrastructure failure is retried).
A --repo flow is cloned into <root>/job-<id>; a --workspace flow runs there.

The worker shows that it is alive through a lease in the database. When a
worker stops renewing it (killed, its machine gone) for --rescue-after,
another worker takes its flows over and resumes them from the brief, the goal
and the sessions in the store; the stopped worker's claude dies at its lease
deadline, and whatever it writes after a takeover is refused. A queued flow
takes the workspace's flow lock: a second flow there waits its turn. SIGTERM: no new flows; running ones get
--grace to finish, then they are handed back. Finished flows stay listed
for --keep-finished (30 days; 0 keeps them forever).

Examples:
   flower worker --store "$FLOWER_STORE" --concurrency 2
   flower worker --queue nightly --root /scratch/flows --rescue-after 5m`

func newWorkerCmd(e *cmdEnv) *cli.Command {
	o := &workerOptions{}
	home, _ := os.UserHomeDir()
	return &cli.Command{
		Name:        "worker",
		Usage:       "run queued flows (flower queue add) until stopped",
		Description: workerHelp,
		Flags: []cli.Flag{
			storeFlag(&o.Store),
			&cli.IntFlag{Name: "concurrency", Value: 1, Usage: "flows `N` at once", EnvVars: []string{"FLOWER_CONCURRENCY"}, Destination: &o.Concurrency},
			&cli.StringFlag{Name: "queue", Value: fleet.DefaultQueue, Usage: "queue `NAME` to take flows from", EnvVars: []string{"FLOWER_QUEUE"}, Destination: &o.Queue},
			&cli.DurationFlag{Name: "rescue-after", Value: fleet.DefaultRescueAfter, Usage: "`D` after this worker stops renewing its lease, others take its flows over", EnvVars: []string{"FLOWER_RESCUE_AFTER"}, Destination: &o.RescueAfter},
			&cli.DurationFlag{Name: "grace", Value: fleet.DefaultGrace, Usage: "on SIGTERM, how long `D` running flows may finish before they are handed back", EnvVars: []string{"FLOWER_GRACE"}, Destination: &o.Grace},
			&cli.DurationFlag{Name: "keep-finished", Value: fleet.DefaultKeepFinished, Usage: "how long `D` finished flows stay in flower queue ls (0: forever)", EnvVars: []string{"FLOWER_KEEP_FINISHED"}, Destination: &o.KeepFinished},
			&cli.StringFlag{Name: "root", Value: filepath.Join(home, ".flower", "workspaces"), Usage: "`DIR` the --repo flows are cloned into", EnvVars: []string{"FLOWER_ROOT"}, Destination: &o.Root},
			runDirFlag(&o.RunDir),
			&cli.StringFlag{Name: "id", Usage: "the worker's `NAME` in flower queue ls (default host-pid)", EnvVars: []string{"FLOWER_WORKER_ID"}, Destination: &o.ID},
			claudeFlag(&o.Claude), hookFlag(&o.Hook), onlineTimeoutFlag(&o.OnlineTimeout),
			&cli.BoolFlag{Name: "no-self-test", Usage: "start even if the guard self-test fails", EnvVars: []string{"FLOWER_NO_SELF_TEST"}, Destination: &o.NoSelfTest},
		},
		Action: func(c *cli.Context) error {
			o.Args = c.Args().Slice()
			return e.do(o, func() error { return runWorkerCmd(c.Context, e, o) })
		},
	}
}

func runWorkerCmd(ctx context.Context, e *cmdEnv, o *workerOptions) error {
	if len(o.Args) > 0 {
		return usagef("flower worker takes no arguments (queue flows with flower queue add)")
	}
	if o.Concurrency < 1 || o.RescueAfter <= 0 || o.KeepFinished < 0 {
		return usagef("--concurrency must be at least 1, --rescue-after above 0 and --keep-finished 0 (forever) or more")
	}
	keep := o.KeepFinished
	if keep == 0 {
		keep = -1 // forever
	}
	f, err := openQueue(ctx, o.Store)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := os.MkdirAll(o.Root, 0o700); err != nil {
		return err
	}
	if !o.NoSelfTest {
		ro := runtimeOptions(o.Root)
		ro.RunDir, ro.Claude, ro.HookPath = cmpOr(o.RunDir, filepath.Join(o.Root, "runs")), o.Claude, o.Hook
		if err := selfTestOnce(ctx, e, ro); err != nil {
			return errSelfTestStops(err)
		}
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	var mu sync.Mutex
	logf := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(e.Stderr, "flower: "+format+"\n", a...)
	}
	if o.ID == "" {
		host, _ := os.Hostname()
		o.ID = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	deadline, err := leaseDeadlineFile(o.Root, o.ID)
	if err != nil {
		return err
	}
	w := &flowRunner{e: e, o: o, logf: logf, deadline: deadline}
	return f.Work(ctx, fleet.WorkOptions{ID: o.ID, Queue: o.Queue, Concurrency: o.Concurrency,
		RescueAfter: o.RescueAfter, Grace: o.Grace, KeepFinished: keep, DeadlineFile: deadline,
		SpoolDir: filepath.Join(o.Root, ".spool"), Runner: w.run, Logf: logf})
}

// leaseDeadlineFile is where the worker keeps its lease's local deadline
// for its flows' supervisors (child.DeadlineEnv): <root>/.leases/<id>.
func leaseDeadlineFile(root, id string) (string, error) {
	dir := filepath.Join(root, ".leases")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return filepath.Join(dir, strings.NewReplacer("/", "_", string(filepath.Separator), "_").Replace(id)), nil
}

// busyAgain is how soon a flow whose workspace is busy looks again.
const busyAgain = 3 * time.Second

func cmpOr(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// flowRunner runs one attempt of a queued flow in this process.
type flowRunner struct {
	e        *cmdEnv
	o        *workerOptions
	logf     func(string, ...any)
	deadline string // the lease's deadline file
}

// run prepares the workspace, brings the flow's documents from the store,
// runs the starter flow unattended and keeps the documents in the store as
// they change. A verdict is the outcome; what kept the flow from running or
// ending is the error.
func (w *flowRunner) run(ctx context.Context, r *fleet.FlowRun) (fleet.Outcome, error) {
	ws, err := w.workspace(ctx, r)
	if err != nil {
		return fleet.Outcome{}, err
	}
	pl, err := resolvePlace(ws, w.o.RunDir)
	if err != nil {
		return fleet.Outcome{Workspace: ws}, fleet.Permanent(err) // no such directory: no retry mends it
	}
	if err := pl.prepare(); err != nil {
		return fleet.Outcome{Workspace: ws}, err
	}
	so := queuedStarterOptions(r.Args, pl)
	ro := runtimeOptions(pl.Workspace)
	ro.RunDir, ro.Claude, ro.HookPath = pl.RunDir, w.o.Claude, w.o.Hook
	ro.Resilience.OnlineTimeout = w.o.OnlineTimeout
	// The worker's own environment says the sandbox mode (FLOWER_SANDBOX).
	if err := applySandbox(w.e.Getenv("FLOWER_SANDBOX"), &ro, w.e.Stderr, w.e.SandboxCheck); err != nil {
		return fleet.Outcome{Workspace: ws}, err
	}
	ro.Env = append(os.Environ(), child.DeadlineEnv+"="+w.deadline) // claude dies with the lease
	ro.RunID = harness.NewRunID()                                   // the lock names it
	lock, err := flow.LockWorkspaceFor(pl.Workspace, ro.RunID, fmt.Sprintf("queued job %d on worker %s", r.JobID, r.Worker))
	var busy *flow.BusyError
	if errors.As(err, &busy) {
		return fleet.Outcome{}, &fleet.WaitError{Reason: "workspace " + pl.Workspace + " is busy: " + busy.Who(), After: busyAgain}
	} else if err != nil {
		return fleet.Outcome{Workspace: ws}, err
	}
	defer lock.Unlock()
	st, release, err := withStore(ctx, w.e, w.o.Store, &ro)
	if err != nil {
		return fleet.Outcome{Workspace: ws}, err
	}
	defer release()
	if st != nil {
		st.SetFence(r.StoreFence())   // a taken-over attempt writes nothing more
		st.SetOutbox(r.StoreOutbox()) // and a database outage loses nothing it writes
	}
	docs := fleet.NewDocuments(st, r.Flow, flow.WorkbenchFor(pl.Workspace, so.Isolate), flow.NewLineage(pl.RunDir, pl.Workspace, flow.StarterName))
	restored, err := docs.Restore(ctx)
	if err != nil {
		return fleet.Outcome{Workspace: ws}, err
	}
	if len(restored) > 0 {
		w.logf("job %d: continuing the flow with %s from the store", r.JobID, strings.Join(restored, ", "))
	}
	ask := r.Args.Ask
	if wk, err := flow.WakeState(pl.Workspace, flow.WakeStateOptions{RunDir: pl.RunDir, Isolate: so.Isolate}); err == nil && wk.Wake {
		ask = ""                             // the brief is there: continue it, nothing new said
		so.FrozenGoal = docs.HasFrozenGoal() // and judge against the goal the first attempt froze
	}
	wf, err := flow.StarterFlow(ask, so)
	if err != nil {
		return fleet.Outcome{Workspace: ws}, err
	}
	defer wf.Close()
	ro.Workbench = wf.Workbench
	rt, err := w.e.NewRuntime(ctx, ro)
	if err != nil {
		return fleet.Outcome{Workspace: ws}, err
	}
	defer rt.Close()
	defer recordRun(ctx, w.e.Stderr, st, rt)
	r.Started(rt.RunID(), pl.Workspace)
	onEvent, stepDone, stopKeeping := docs.Watch(ctx, docsEvery, w.logf)
	runner, budget := withBudget(rt, r.Args.MaxBudgetUSD)
	fc, runErr := wf.Run(ctx, runner, onEvent, stepDone)
	stopKeeping()
	out := summarize(wf.Workflow, rt, fc, runErr, ctx.Err())
	budget.apply(&out)
	return attemptEnd(out, pl.Workspace, ctx.Err())
}

// attemptEnd is a queued flow's attempt as the fleet takes it: a typed
// verdict is the outcome (an abort is unreachable); a last round with no
// typed verdict because its judge step failed (flow.Verdict.JudgeFailed:
// disk full, API unreachable, a crash) is no outcome but an error River
// retries, resuming the flow; so is anything else that kept the flow from
// ending, and a stopped context.
func attemptEnd(out flowOutcome, ws string, ctxErr error) (fleet.Outcome, error) {
	res := fleet.Outcome{Verdict: out.Verdict, Run: out.Run, Workspace: ws, CostUSD: out.CostUSD, Error: out.Error}
	noVerdict := out.Verdict != flow.Achieved && out.JudgeFailed != ""
	if noVerdict {
		res.Verdict = "" // the round's not_yet was only for its worker
	}
	switch {
	case ctxErr != nil:
		return res, ctxErr
	case noVerdict:
		return res, fmt.Errorf("the last round's judge gave no verdict (its step failed: %s); retried, resuming where it stopped", out.JudgeFailed)
	case out.Verdict != "" || out.OK || out.ExitCode == exitAborted:
		if out.ExitCode == exitAborted && res.Verdict == "" {
			res.Verdict = flow.Unreachable
		}
		return res, nil
	}
	return res, errors.New(out.Error)
}

// docsEvery is how often a running flow's documents are saved besides
// after every step.
const docsEvery = 500 * time.Millisecond

// queuedStarterOptions are the starter's options of a queued flow:
// unattended (no answerer, questions do not wait).
func queuedStarterOptions(a fleet.FlowArgs, pl place) flow.StarterOptions {
	so := flow.DefaultStarterOptions()
	so.Workspace, so.RunDir = pl.Workspace, pl.RunDir
	so.Isolate, so.NoGoal, so.JudgeCanRun, so.Timeout = a.Isolate, a.NoGoal, a.JudgeCanRun, flow.NoWait
	so.Model, so.Instructions = a.Model, a.Instructions
	if a.Rounds > 0 {
		so.Rounds = a.Rounds
	}
	return so
}

// workspace is where the attempt runs: the shared --workspace, or the
// clone of --repo in <root>/job-<id> (an earlier attempt's clone on this
// machine is reused).
func (w *flowRunner) workspace(ctx context.Context, r *fleet.FlowRun) (string, error) {
	if r.Args.Workspace != "" {
		return r.Args.Workspace, nil
	}
	dir := filepath.Join(w.o.Root, fmt.Sprintf("job-%d", r.JobID))
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		return dir, nil
	}
	os.RemoveAll(dir) // a clone that did not finish
	args := []string{"clone", "--quiet"}
	if r.Args.Ref != "" {
		args = append(args, "--branch", r.Args.Ref)
	}
	args = append(args, "--", r.Args.Repo, dir)
	cmd := child.Command(ctx, "git", args...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("git clone %s: %v: %s", r.Args.Repo, err, strings.TrimSpace(string(out)))
	}
	return dir, nil
}
