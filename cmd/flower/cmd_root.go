package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/fleet"
	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/sessionstore"
)

// starterOptions are the options of `flower "ask"`: the starter flow's
// parameters (flow.StarterOptions) and where it runs.
type starterOptions struct {
	Workspace, RunDir, Claude, Hook     string
	Store, Flow                         string // Flow: the name the flow's documents travel under in Store
	New, Isolate, ClarifyOnly, NoGoal   bool
	Rounds, MaxAsks                     int
	JudgeCanRun, NoSelfTest, JSON       bool
	Quiet, Continue                     bool // Continue: flower continue, the wake without new words
	Timeout, OnlineTimeout, IdleTimeout time.Duration
	Answers, Instructions, Model        string
	Sandbox                             string
	MaxBudgetUSD                        float64
	Version                             bool
	AllowDirs                           dirList
	TrustAPI                            bool
	Ask                                 []string // the words of the ask; "-" reads stdin
}

const starterHelp = `flower [flags] "what you want"   (or - to read it from stdin)

Clarify → set a goal → work under the goal guard. The clarifier may ask you
questions; the brief lands in <workspace>/.flower/notes/需求.md and the goal in
目标.md; a coordinator delegates to a coder subagent; a judge checks each round.
Run flower again in the same workspace to wake the work with a new sentence,
or flower continue to wake it as it is. A lone word is no ask (flower status
is a usage error): write a sentence, or flower -- word.
Runs are recorded in <workspace>/.flower/runs (flower runs -C <workspace>).

Flags go anywhere; -- ends them (flower -- --not-a-flag is an ask).

Examples:
   flower "add a --verbose flag to cli.py"
   flower -C ~/src/app "fix the failing test" --isolate
   echo "write a haiku to haiku.txt" | flower --json --timeout 0 - | jq -c .kind
   flower --answers answers.txt "..."          # questions answered from a file
   flower continue                             # wake the work, no new words

Output: at a terminal a live status line; piped or redirected the same view
as plain lines (no redraws, no colour), as gh does; --json (FLOWER_JSON=1)
prints JSON lines. NO_COLOR turns colour off, TERM=dumb uses ASCII only,
FLOWER_FORCE_TTY=N lays the view out for N columns.

Commands: step, runs, sessions, ask, tell, continue, wake-state, doctor, demo,
model, claude, completion, man, version, help (flower help COMMAND for one).

Exit codes: 0 done, 1 failed, 2 usage, 3 aborted (unreachable goal), 130 interrupted.`

// newStarterCmd is the root command: the starter flow; with cont, it is
// `flower continue`, the same flow woken without a new sentence.
func newStarterCmd(e *cmdEnv, cont bool) *cli.Command {
	o := &starterOptions{Continue: cont}
	d := flow.DefaultStarterOptions()
	c := &cli.Command{
		UsageText: starterHelp,
		Flags: []cli.Flag{
			workspaceFlag(&o.Workspace, wsUsageFlow), runDirFlag(&o.RunDir), storeFlag(&o.Store), flowFlag(&o.Flow),
			&cli.BoolFlag{Name: "new", Usage: "start over: ignore an existing brief, goal and earlier sessions", EnvVars: []string{"FLOWER_NEW"}, Destination: &o.New},
			isolateFlag(&o.Isolate),
			&cli.BoolFlag{Name: "clarify-only", Usage: "stop after the brief is frozen", EnvVars: []string{"FLOWER_CLARIFY_ONLY"}, Destination: &o.ClarifyOnly},
			&cli.BoolFlag{Name: "no-goal", Usage: "work without a goal and judge", EnvVars: []string{"FLOWER_NO_GOAL"}, Destination: &o.NoGoal},
			&cli.IntFlag{Name: "rounds", Value: d.Rounds, Usage: "judge rounds `N` before giving up", EnvVars: []string{"FLOWER_ROUNDS"}, Destination: &o.Rounds},
			&cli.BoolFlag{Name: "judge-can-run", Usage: "the judge may run commands (Bash) to verify", EnvVars: []string{"FLOWER_JUDGE_CAN_RUN"}, Destination: &o.JudgeCanRun},
			&cli.IntFlag{Name: "max-asks", Usage: "at most `N` questions to the person (0: no cap)", EnvVars: []string{"FLOWER_MAX_ASKS"}, Destination: &o.MaxAsks},
			&cli.DurationFlag{Name: "timeout", Value: d.Timeout, Usage: "how long `DURATION` a question waits for an answer, e.g. 90s or 5m (0: never wait, unattended)", EnvVars: []string{"FLOWER_TIMEOUT"}, Destination: &o.Timeout},
			&cli.StringFlag{Name: "answers", Usage: "answer the agents' questions from `FILE` (one answer per line), for pipelines", EnvVars: []string{"FLOWER_ANSWERS"}, Destination: &o.Answers},
			instructionsFlag(&o.Instructions), modelFlag(&o.Model), budgetFlag(&o.MaxBudgetUSD),
			jsonFlag(&o.JSON, "print events as JSON lines, the flow_result last (without it, piped output is plain lines for people)"),
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only the outcome (and errors)", EnvVars: []string{"FLOWER_QUIET"}, Destination: &o.Quiet},
			claudeFlag(&o.Claude), hookFlag(&o.Hook), allowDirFlag(&o.AllowDirs), sandboxFlag(&o.Sandbox), trustAPIFlag(&o.TrustAPI),
			&cli.BoolFlag{Name: "no-self-test", Usage: "start even if the guard self-test fails", EnvVars: []string{"FLOWER_NO_SELF_TEST"}, Destination: &o.NoSelfTest},
			onlineTimeoutFlag(&o.OnlineTimeout), idleTimeoutFlag(&o.IdleTimeout),
			// No FLOWER_VERSION: a variable left set would turn every run into a version print.
			&cli.BoolFlag{Name: "version", Aliases: []string{"v"}, Usage: "print the version and exit", Destination: &o.Version},
		},
		Action: func(c *cli.Context) error {
			if o.Version {
				return printVersion(e.Stdout)
			}
			if cont {
				if err := noArgs(c, `to wake it with new words: flower "…"`); err != nil {
					return err
				}
			}
			o.Ask = c.Args().Slice()
			return e.do(o, func() error { return runStarterCmd(c.Context, e, o) })
		},
	}
	if cont {
		c.Name, c.UsageText = "continue", ""
		c.Usage = "wake the work in this workspace without a new sentence: the brief on disk goes on"
		// --new starts over, which is no continuing.
		c.Flags = slices.DeleteFunc(c.Flags, func(f cli.Flag) bool { return f.Names()[0] == "version" || f.Names()[0] == "new" })
	}
	return c
}

// checkAsk refuses a run with nothing to do before anything is written: an
// empty ask never starts one (it says what `flower wake-state` would and
// how to continue), and `flower continue` needs a complete brief on disk.
// With --flow the brief may be in the store: continue's check waits for it
// (checkFlowDocs).
func checkAsk(o *starterOptions, ask string, pl place) error {
	if ask != "" && !o.Continue {
		return nil
	}
	w, err := flow.WakeState(pl.Workspace, flow.WakeStateOptions{RunDir: pl.RunDir, Isolate: o.Isolate})
	switch {
	case o.Continue && (err != nil || !w.Wake) && o.Flow != "":
		return nil
	case o.Continue && (err != nil || !w.Wake):
		return usagef("nothing to continue in %s: no complete brief at %s (start with: flower \"…\")", pl.Workspace, w.BriefPath)
	case o.Continue:
		return nil
	}
	msg := `say what you want: flower "…" (or - to read it from stdin)`
	if err == nil && w.Wake && !o.New {
		goal := ""
		if w.HasGoal {
			goal = " and a goal"
		}
		msg += fmt.Sprintf("\nthis workspace has work to wake: the brief %s%s, %s in %s\n"+
			"to wake it as it is: flower continue; to add to it: flower \"…\"", w.BriefPath, goal, plural(w.Runs, "run"), w.RunDir)
	}
	return usagef("%s", msg)
}

// readAsk is the ask from the words, or stdin for "-".
func readAsk(e *cmdEnv, words []string) (string, error) {
	if len(words) == 1 && words[0] == "-" {
		b, err := io.ReadAll(e.Stdin)
		if err != nil {
			return "", fmt.Errorf("reading the ask from stdin: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	return strings.TrimSpace(strings.Join(words, " ")), nil
}

// askTimeout maps --timeout to flow's: 0 means unattended, a question does
// not wait at all (flow.NoWait); flow reads a zero Duration as the 1800 s
// default.
func askTimeout(d time.Duration) time.Duration {
	if d <= 0 {
		return flow.NoWait
	}
	return d
}

// runStarterCmd runs the starter flow for o.
func runStarterCmd(ctx context.Context, e *cmdEnv, o *starterOptions) error {
	ask, err := readAsk(e, o.Ask)
	if err != nil {
		return err
	}
	pl, err := resolvePlace(o.Workspace, o.RunDir)
	if err != nil {
		return err
	}
	if err := checkAsk(o, ask, pl); err != nil {
		return err
	}
	if err := checkFlowName(o.Flow, o.Store); err != nil {
		return err
	}
	v := newView(e, o.JSON, o.Quiet)
	jsonOut := v.json

	so, err := starterFlowOptions(e, o, pl, jsonOut)
	if err != nil {
		return err
	}
	ro := runtimeOptions(pl.Workspace)
	ro.RunDir, ro.Claude, ro.HookPath = pl.RunDir, o.Claude, o.Hook
	ro.Resilience.OnlineTimeout, ro.Resilience.IdleTimeout = o.OnlineTimeout, idleLimit(o.IdleTimeout)
	ro.TrustWorkspaceAPI = o.TrustAPI
	if ro.AllowDirs, err = allowDirs(o.AllowDirs); err != nil {
		return err
	}
	if err := applySandbox(o.Sandbox, &ro, e.Stderr, e.SandboxCheck); err != nil {
		return err
	}
	// One flow per workspace: a second one is turned away at once, before
	// the self-test and before anything is written.
	if err := flow.CheckWorkspace(pl.Workspace); err != nil {
		return err
	}
	st, release, err := withStore(ctx, e, o.Store, &ro)
	if err != nil {
		return err
	}
	defer release()
	docs, err := checkFlowDocs(ctx, o, pl, st)
	if err != nil {
		return err
	}
	if !o.NoSelfTest {
		// Before anything is written: a refused start leaves no trace.
		if err := selfTestOnce(ctx, e, ro); errors.Is(err, context.Canceled) {
			return err // interrupted: exit 130, no word about the guards
		} else if err != nil {
			return errSelfTestStops(err)
		}
	}
	if err := pl.prepare(); err != nil {
		return err
	}
	if err := ensureHome(pl.Workspace); err != nil {
		return err
	}
	ro.RunID = harness.NewRunID() // the lock names it
	lock, err := flow.LockWorkspace(pl.Workspace, ro.RunID)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	if !o.NoSelfTest {
		stampSelfTest(ro, e.Getenv)
	}
	if so.FrozenGoal, err = restoreFlowDocs(ctx, e, o, docs); err != nil {
		return err
	}

	out, err := runStarter(ctx, e, ask, so, ro, runStore{st: st, docs: docs}, o.MaxBudgetUSD, v)
	if err != nil {
		return err
	}
	return out.exitError(jsonOut)
}

// starterFlowOptions are the starter flow's options for o in pl; who
// answers the agents' questions: the --answers file, else the person at a
// terminal (not with --json), else nobody.
func starterFlowOptions(e *cmdEnv, o *starterOptions, pl place, jsonOut bool) (flow.StarterOptions, error) {
	so := flow.DefaultStarterOptions()
	so.Workspace, so.RunDir = pl.Workspace, pl.RunDir
	so.New, so.Isolate, so.ClarifyOnly, so.NoGoal = o.New, o.Isolate, o.ClarifyOnly, o.NoGoal
	so.Rounds, so.JudgeCanRun, so.MaxAsks, so.Timeout = o.Rounds, o.JudgeCanRun, o.MaxAsks, askTimeout(o.Timeout)
	so.Instructions, so.Model = o.Instructions, o.Model
	switch {
	case o.Answers != "":
		fa, err := flow.LoadFileAnswers(o.Answers)
		if err != nil {
			return so, err
		}
		so.Answerer = fa
	case e.IsTTY(e.Stdin) && !jsonOut:
		so.Answerer = &flow.TerminalAnswers{Lines: flow.NewLines(e.Stdin), Out: e.Stderr}
	}
	return so, nil
}

// runStore is what a run keeps in a --store store: the run's record (st)
// and, with --flow, the flow's documents (docs; nil without).
type runStore struct {
	st   *sessionstore.Store
	docs *fleet.Documents
}

// runStarter builds the starter flow and its Runtime and runs it with
// progress on c's writer; with a --store store (rs.st), the run is recorded
// there, and with --flow (rs.docs) the flow's documents are kept there as
// they change. The outcome says how it ended; the error is for what kept it
// from starting.
func runStarter(ctx context.Context, e *cmdEnv, ask string, so flow.StarterOptions, ro harness.Options, rs runStore, budgetUSD float64, v view) (flowOutcome, error) {
	jsonOut := v.json
	prog := newProgress(e.Stdout, v, ro.Handoff.At(), chineseLocale(e.Getenv))
	so.Answerer = prog.showAnswers(so.Answerer)
	wf, err := flow.StarterFlow(ask, so)
	if err != nil {
		if errors.Is(err, flow.ErrNoAsk) {
			return flowOutcome{}, usagef("%v", err)
		}
		return flowOutcome{}, err
	}
	defer wf.Close()
	ro.Workbench = wf.Workbench
	rt, err := e.NewRuntime(ctx, ro)
	if err != nil {
		return flowOutcome{}, err
	}
	defer rt.Close()
	defer recordRun(ctx, e.Stderr, rs.st, rt)
	prog.announceWake(wf.Workflow, ask)
	wf.Channel.OnInbox = prog.inboxWaiting
	wf.Channel.OnRecord = func(ev harness.Event) { rt.Record(ev); prog.event(ev) }
	if err := wf.Channel.Open(rt.RunDir(), rt.RunID(), rt.Workspace()); err != nil { // `flower tell` finds the run by it
		return flowOutcome{}, err
	}
	// One reader of the terminal: the channel's questions and the interrupt
	// prompt share it.
	lines := flow.NewLines(e.Stdin)
	if ta, ok := so.Answerer.(*flow.TerminalAnswers); ok && ta.Lines != nil {
		lines = ta.Lines
	}
	rctx, stopSignals := interruptible(ctx, rt, lines, e.Stderr, !jsonOut && e.IsTTY(e.Stdin))
	defer stopSignals()
	onEvent, stepDone := prog.event, prog.stepDone
	if rs.docs != nil {
		docEvent, docStep, stopKeeping := rs.docs.Watch(rctx, docsEvery, func(f string, a ...any) { fmt.Fprintf(e.Stderr, "flower: "+f+"\n", a...) })
		defer stopKeeping()
		onEvent = func(ev harness.Event) { docEvent(ev); prog.event(ev) }
		stepDone = func(s flow.Step, r harness.StepResult) { docStep(s, r); prog.stepDone(s, r) }
	}
	runner, budget := withBudget(rt, budgetUSD)
	fc, runErr := wf.Run(rctx, runner, onEvent, stepDone)
	out := summarize(wf.Workflow, rt, fc, runErr, rctx.Err())
	budget.apply(&out)
	out.Unread = wf.Channel.Waiting()
	prog.finish(out)
	return out, nil
}
