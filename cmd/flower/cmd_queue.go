package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/fleet"
	"github.com/flowerhq/flower/internal/redact"
)

// queueOptions are the options of every `flower queue` command; the flow's
// own (Args) only matter to add.
type queueOptions struct {
	Store, Queue string
	MaxAttempts  int
	JSON, Watch  bool
	Flow         fleet.FlowArgs
	Words        []string
}

const queueHelp = `Examples:
   export FLOWER_STORE='postgres://flower:…@db:5432/flower'
   flower queue add --repo https://git.example/app.git --ref main "fix the failing test"
   flower queue add --workspace /shared/app --rounds 5 --max-budget-usd 2 "add a --verbose flag"
   flower queue ls --json
   flower queue show 42
   flower queue cancel 42

Workers (flower worker, on any machine with the same store) take the flows.`

func newQueueCmd(e *cmdEnv) *cli.Command {
	sub := func(name, usage, argsUsage string, run func(context.Context, *cmdEnv, *queueOptions) error, extra func(*queueOptions) []cli.Flag) *cli.Command {
		o := &queueOptions{}
		flags := []cli.Flag{storeFlag(&o.Store), jsonFlag(&o.JSON, "print JSON (one object or array)")}
		if extra != nil {
			flags = append(flags, extra(o)...)
		}
		return &cli.Command{Name: name, Usage: usage, ArgsUsage: argsUsage, Flags: flags, Action: func(c *cli.Context) error {
			o.Words = c.Args().Slice()
			return e.do(o, func() error { return run(c.Context, e, o) })
		}}
	}
	return &cli.Command{
		Name:        "queue",
		Usage:       "queue flows for workers on any machine (needs --store postgres://…)",
		Description: queueHelp,
		Subcommands: []*cli.Command{
			sub("add", "queue a flow; prints its job id", `"what you want"`, runQueueAdd, queueAddFlags),
			sub("ls", "list the queued flows: state, attempt, worker, run, verdict; --watch prints each change", "", runQueueList, func(o *queueOptions) []cli.Flag {
				return []cli.Flag{&cli.BoolFlag{Name: "watch", Aliases: []string{"w"}, Usage: "keep listing: print each job whose line changes, until Ctrl-C (as kubectl get -w)", EnvVars: []string{"FLOWER_WATCH"}, Destination: &o.Watch}}
			}),
			sub("show", "show one queued flow and its attempts", "ID", runQueueShow, nil),
			sub("cancel", "cancel a queued or running flow", "ID", runQueueCancel, nil),
		},
	}
}

func queueAddFlags(o *queueOptions) []cli.Flag {
	a := &o.Flow
	return []cli.Flag{
		&cli.StringFlag{Name: "repo", Usage: "git `URL` the worker clones into a fresh workspace", EnvVars: []string{"FLOWER_REPO"}, Destination: &a.Repo},
		&cli.StringFlag{Name: "ref", Usage: "branch or tag `R` of --repo", EnvVars: []string{"FLOWER_REF"}, Destination: &a.Ref},
		&cli.StringFlag{Name: "workspace", Aliases: []string{"C"}, Usage: "workspace `PATH` on a filesystem every worker shares (absolute)", EnvVars: []string{"FLOWER_WORKSPACE"}, Destination: &a.Workspace},
		&cli.StringFlag{Name: "queue", Usage: "queue `NAME`", Value: fleet.DefaultQueue, EnvVars: []string{"FLOWER_QUEUE"}, Destination: &o.Queue},
		&cli.IntFlag{Name: "max-attempts", Usage: "attempts `N` before an infrastructure failure gives up", Value: fleet.DefaultMaxAttempts, EnvVars: []string{"FLOWER_MAX_ATTEMPTS"}, Destination: &o.MaxAttempts},
		&cli.StringFlag{Name: "key", Usage: "unique `KEY`: while a flow with it is not finished, add returns that flow", EnvVars: []string{"FLOWER_KEY"}, Destination: &a.Key},
		&cli.IntFlag{Name: "rounds", Usage: "judge rounds `N` before giving up (default 3)", EnvVars: []string{"FLOWER_ROUNDS"}, Destination: &a.Rounds},
		isolateFlag(&a.Isolate),
		&cli.BoolFlag{Name: "no-goal", Usage: "work without a goal and judge", EnvVars: []string{"FLOWER_NO_GOAL"}, Destination: &a.NoGoal},
		&cli.BoolFlag{Name: "judge-can-run", Usage: "the judge may run commands (Bash) to verify", EnvVars: []string{"FLOWER_JUDGE_CAN_RUN"}, Destination: &a.JudgeCanRun},
		modelFlag(&a.Model), instructionsFlag(&a.Instructions),
		budgetFlag(&a.MaxBudgetUSD),
	}
}

// openQueue opens the queue's database (--store / FLOWER_STORE).
func openQueue(ctx context.Context, store string) (*fleet.Fleet, error) {
	if store == "" {
		return nil, usagef("the queue lives in a PostgreSQL store: --store postgres://… (or FLOWER_STORE)")
	}
	return fleet.Open(ctx, store)
}

func runQueueAdd(ctx context.Context, e *cmdEnv, o *queueOptions) error {
	ask, err := readAsk(e, o.Words)
	if err != nil {
		return err
	}
	o.Flow.Ask = redactAsk(e.Stderr, ask)
	if err := o.Flow.Validate(); err != nil {
		return usagef("%v", err)
	}
	if ws := o.Flow.Workspace; ws != "" {
		// Checked here, where it can be: a flow that cannot run is refused,
		// not retried for minutes by every worker.
		if st, err := os.Stat(ws); err != nil {
			return usagef("--workspace %s: no such directory here (give a directory every worker sees)", ws)
		} else if !st.IsDir() {
			return usagef("--workspace %s is not a directory (give the workspace's directory)", ws)
		}
	}
	f, err := openQueue(ctx, o.Store)
	if err != nil {
		return err
	}
	defer f.Close()
	id, dup, err := f.Add(ctx, o.Flow, fleet.AddOptions{Queue: o.Queue, MaxAttempts: o.MaxAttempts})
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(e.Stdout, map[string]any{"kind": "queued", "id": id, "duplicate": dup})
	}
	if dup {
		fmt.Fprintf(e.Stderr, "flower: a flow with key %q is queued already: job %d\n", o.Flow.Key, id)
	}
	_, err = fmt.Fprintln(e.Stdout, id)
	return err
}

// redactAsk is ask with its secrets replaced (it is stored in the queue's
// database as the job's arguments), saying so on stderr when it removed one.
func redactAsk(stderr io.Writer, ask string) string {
	clean := redact.Process().String(ask)
	if clean != ask {
		fmt.Fprintf(stderr, "flower: the ask held a secret; it is queued with %s in its place: pass secrets through the worker's environment\n", redact.Mark)
	}
	return clean
}

// queueJobJSON is a job as `queue ls|show --json` print it.
type queueJobJSON struct {
	Kind string `json:"kind"`
	fleet.Job
}

func runQueueList(ctx context.Context, e *cmdEnv, o *queueOptions) error {
	if len(o.Words) > 0 {
		return usagef("flower queue ls takes no arguments")
	}
	f, err := openQueue(ctx, o.Store)
	if err != nil {
		return err
	}
	defer f.Close()
	if o.Watch {
		if o.JSON {
			return usagef("queue ls --watch prints lines for people; drop --json")
		}
		return watchQueue(ctx, e.Stdout, f)
	}
	jobs, err := f.List(ctx)
	if err != nil {
		return err
	}
	if o.JSON {
		out := make([]queueJobJSON, len(jobs))
		for i, j := range jobs {
			out[i] = queueJobJSON{Kind: "queue_job", Job: j}
		}
		return writeJSON(e.Stdout, out)
	}
	if len(jobs) == 0 {
		_, err := fmt.Fprintf(e.Stdout, "no flows queued in %s\n", f.URL())
		return err
	}
	t := &table{}
	t.row("ID", "STATE", "ATTEMPT", "WORKER", "RUN", "VERDICT", "ASK", "NOTE")
	for _, j := range jobs {
		t.row(j.ID, j.State, j.Attempt, dash(j.Worker), dash(j.Run), dash(j.Verdict), clipAsk(j.Ask), dash(clipAsk(j.Note)))
	}
	return t.write(e.human(e.Stdout))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func clipAsk(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 50 {
		return string(r[:50]) + "…"
	}
	return s
}

// jobID is the one argument of show and cancel.
func jobID(words []string, cmd string) (int64, error) {
	if len(words) != 1 {
		return 0, usagef("flower queue %s takes one job id (flower queue ls lists them)", cmd)
	}
	id, err := strconv.ParseInt(words[0], 10, 64)
	if err != nil || id <= 0 {
		return 0, usagef("flower queue %s: %q is not a job id (a number, as flower queue ls shows)", cmd, words[0])
	}
	return id, nil
}

// onJob runs do on the queue with the job id of show or cancel.
func onJob(ctx context.Context, o *queueOptions, cmd string, do func(f *fleet.Fleet, id int64) error) error {
	id, err := jobID(o.Words, cmd)
	if err != nil {
		return err
	}
	f, err := openQueue(ctx, o.Store)
	if err != nil {
		return err
	}
	defer f.Close()
	return do(f, id)
}

func runQueueShow(ctx context.Context, e *cmdEnv, o *queueOptions) error {
	return onJob(ctx, o, "show", func(f *fleet.Fleet, id int64) error { return showJob(ctx, e, o, f, id) })
}

func showJob(ctx context.Context, e *cmdEnv, o *queueOptions, f *fleet.Fleet, id int64) error {
	j, err := f.Get(ctx, id)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(e.Stdout, queueJobJSON{Kind: "queue_job", Job: j})
	}
	fmt.Fprintf(e.Stdout, "job %d  %s  attempt %d/%d  queue %s\nask: %s\n", j.ID, j.State, j.Attempt, j.MaxAttempts, j.Queue, j.Ask)
	where := j.Args.Workspace
	if j.Args.Repo != "" {
		where = strings.TrimSpace(j.Args.Repo + " " + j.Args.Ref)
	}
	fmt.Fprintf(e.Stdout, "where: %s\n", where)
	if j.Note != "" {
		fmt.Fprintf(e.Stdout, "note: %s\n", j.Note)
	}
	t := &table{}
	t.row("ATTEMPT", "WORKER", "RUN", "WORKSPACE", "VERDICT", "COST", "ENDED")
	for _, a := range j.Attempts {
		t.row(a.Attempt, a.Worker, dash(a.Run), dash(a.Workspace), dash(a.Verdict), fmt.Sprintf("$%.4f", a.CostUSD), dash(a.EndedAt))
	}
	if len(j.Attempts) > 0 {
		t.write(e.human(e.Stdout))
	}
	for _, er := range j.Errors {
		fmt.Fprintf(e.Stdout, "error: %s\n", er)
	}
	return nil
}

func runQueueCancel(ctx context.Context, e *cmdEnv, o *queueOptions) error {
	return onJob(ctx, o, "cancel", func(f *fleet.Fleet, id int64) error { return cancelJob(ctx, e, o, f, id) })
}

func cancelJob(ctx context.Context, e *cmdEnv, o *queueOptions, f *fleet.Fleet, id int64) error {
	state, err := f.Cancel(ctx, id)
	if errors.Is(err, fleet.ErrNoJob) {
		return fmt.Errorf("%w (flower queue ls lists the jobs)", err)
	}
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(e.Stdout, map[string]any{"kind": "cancelled", "id": id, "state": state})
	}
	msg := "cancelled"
	switch state {
	case "running":
		msg = "cancelling: its worker stops the flow"
	case "completed", "discarded":
		msg = "had ended already (" + state + "); nothing to cancel"
	}
	_, err = fmt.Fprintf(e.Stdout, "job %d %s\n", id, msg)
	return err
}
