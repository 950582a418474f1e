package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
)

// Flags of `flower "ask"`: starter_flow's parameters (design.md §3).
var (
	flagNew         = &cli.BoolFlag{Name: "new", Usage: "start over: ignore an existing brief, goal and earlier sessions", EnvVars: []string{"FLOWER_NEW"}}
	flagIsolate     = &cli.BoolFlag{Name: "isolate", Usage: "the coder works in its own git worktree (the workspace must be a git repo)", EnvVars: []string{"FLOWER_ISOLATE"}}
	flagClarifyOnly = &cli.BoolFlag{Name: "clarify-only", Usage: "stop after the brief is frozen", EnvVars: []string{"FLOWER_CLARIFY_ONLY"}}
	flagNoGoal      = &cli.BoolFlag{Name: "no-goal", Usage: "work without a goal and judge", EnvVars: []string{"FLOWER_NO_GOAL"}}
	flagRounds      = &cli.IntFlag{Name: "rounds", Value: 3, Usage: "judge rounds `N` before giving up", EnvVars: []string{"FLOWER_ROUNDS"}}
	flagJudgeCanRun = &cli.BoolFlag{Name: "judge-can-run", Usage: "the judge may run commands (Bash) to verify", EnvVars: []string{"FLOWER_JUDGE_CAN_RUN"}}
	flagMaxAsks     = &cli.IntFlag{Name: "max-asks", Usage: "at most `N` questions to the person (0: no cap)", EnvVars: []string{"FLOWER_MAX_ASKS"}}
	flagTimeout     = &cli.DurationFlag{Name: "timeout", Value: flow.DefaultStarterOptions().Timeout, Usage: "how long a question waits for an answer (0: never wait, unattended)", EnvVars: []string{"FLOWER_TIMEOUT"}}
	flagAnswers     = &cli.StringFlag{Name: "answers", Usage: "answer the agents' questions from `FILE` (one answer per line), for pipelines", EnvVars: []string{"FLOWER_ANSWERS"}}
	flagNoSelfTest  = &cli.BoolFlag{Name: "no-self-test", Usage: "start even if the guard self-test fails", EnvVars: []string{"FLOWER_NO_SELF_TEST"}}
)

var starterFlags = []cli.Flag{
	flagStepWorkspace, flagStepRunDir, flagNew, flagIsolate, flagClarifyOnly, flagNoGoal, flagRounds,
	flagJudgeCanRun, flagMaxAsks, flagTimeout, flagAnswers, flagStepInstructions, flagStepModel,
	flagStepJSON, flagStepClaude, flagStepHook, flagNoSelfTest,
}

const starterHelp = `flower [flags] "what you want"   (or - to read it from stdin)

Clarify → set a goal → work under the goal guard. The clarifier may ask you
questions; the brief lands in <workspace>/.flower/notes/需求.md and the goal in
目标.md; a coordinator delegates to a coder subagent; a judge checks each round.
Run flower again in the same workspace to wake the work with a new sentence.

Examples:
   flower "add a --verbose flag to cli.py"
   flower -C ~/src/app --isolate "fix the failing test"
   echo "write a haiku to haiku.txt" | flower --json --timeout 0 - | jq -c .kind
   flower --answers answers.txt "..."          # questions answered from a file

Exit codes: 0 done, 1 failed, 2 usage, 3 aborted (unreachable goal), 130 interrupted.`

func init() {
	rootFlags = starterFlags
	rootAction = starterAction
	rootUsageText = starterHelp
}

// readAsk is the ask from the arguments, or stdin for "-".
func readAsk(c *cli.Context) (string, error) {
	args := c.Args().Slice()
	if len(args) == 1 && args[0] == "-" {
		b, err := io.ReadAll(c.App.Reader)
		if err != nil {
			return "", fmt.Errorf("reading the ask from stdin: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	return strings.TrimSpace(strings.Join(args, " ")), nil
}

// isTTY reports whether v is a terminal.
func isTTY(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// flowExit is the outcome of a flow run as an exit code.
type flowExit struct {
	code int
	msg  string
}

func (e *flowExit) Error() string { return e.msg }
func (e *flowExit) ExitCode() int { return e.code }

func starterAction(c *cli.Context) error {
	ask, err := readAsk(c)
	if err != nil {
		return err
	}
	ws, err := filepath.Abs(c.String(flagStepWorkspace.Name))
	if err != nil {
		return err
	}
	runDir := c.String(flagStepRunDir.Name)
	jsonOut := c.Bool(flagStepJSON.Name) || !isTTY(c.App.Writer)

	so := flow.DefaultStarterOptions()
	so.Workspace, so.RunDir = ws, runDir
	so.New, so.Isolate, so.ClarifyOnly, so.NoGoal = c.Bool(flagNew.Name), c.Bool(flagIsolate.Name), c.Bool(flagClarifyOnly.Name), c.Bool(flagNoGoal.Name)
	so.Rounds, so.JudgeCanRun, so.MaxAsks, so.Timeout = c.Int(flagRounds.Name), c.Bool(flagJudgeCanRun.Name), c.Int(flagMaxAsks.Name), c.Duration(flagTimeout.Name)
	so.Instructions, so.Model = c.String(flagStepInstructions.Name), c.String(flagStepModel.Name)
	switch {
	case c.String(flagAnswers.Name) != "":
		fa, err := flow.LoadFileAnswers(c.String(flagAnswers.Name))
		if err != nil {
			return err
		}
		so.Answerer = fa
	case isTTY(c.App.Reader) && !jsonOut:
		so.Answerer = &flow.TerminalAnswers{In: c.App.Reader, Out: c.App.ErrWriter}
	}
	if ask == "" {
		if w, err := flow.WakeState(ws, flow.WakeStateOptions{RunDir: runDir, Isolate: so.Isolate}); err != nil || !w.Wake || so.New {
			return usagef("say what you want: flower \"…\" (or - to read it from stdin)")
		}
	}

	ro := runtimeOptions(ws)
	ro.RunDir, ro.Claude, ro.HookPath = runDir, c.String(flagStepClaude.Name), c.String(flagStepHook.Name)
	if !c.Bool(flagNoSelfTest.Name) {
		if err := selfTestOnce(c.Context, ro); err != nil {
			return fmt.Errorf("%w\n(the guards would not hold; `flower doctor` shows details; --no-self-test starts anyway)", err)
		}
	}

	out, err := runStarter(c, ask, so, ro, jsonOut)
	if err != nil {
		return err
	}
	if out.ExitCode != exitOK {
		return &flowExit{code: out.ExitCode, msg: out.Error}
	}
	return nil
}

// runStarter builds the starter flow and its Runtime and runs it with
// progress on c's writer. The outcome says how it ended; the error is for
// what kept it from starting.
func runStarter(c *cli.Context, ask string, so flow.StarterOptions, ro harness.Options, jsonOut bool) (flowOutcome, error) {
	wf, err := flow.StarterFlow(ask, so)
	if err != nil {
		if errors.Is(err, flow.ErrNoAsk) {
			return flowOutcome{}, usagef("%v", err)
		}
		return flowOutcome{}, err
	}
	defer wf.Close()
	ro.Workbench = wf.Workbench
	rt, err := harness.New(c.Context, ro)
	if err != nil {
		return flowOutcome{}, err
	}
	defer rt.Close()

	prog := newProgress(c.App.Writer, jsonOut, ro.Handoff.At())
	ctx, stopSignals := interruptible(c.Context, rt, c.App.Reader, c.App.ErrWriter, !jsonOut && isTTY(c.App.Reader))
	defer stopSignals()
	fc, runErr := wf.Run(ctx, rt, prog.event, prog.stepDone)
	out := summarize(wf, rt, fc, runErr, ctx.Err())
	prog.finish(out)
	return out, nil
}

// flowOutcome is the final line of a run: where everything is and how it ended.
type flowOutcome struct {
	Kind      string               `json:"kind"` // "flow_result"
	OK        bool                 `json:"ok"`
	ExitCode  int                  `json:"exit_code"`
	Error     string               `json:"error,omitempty"`
	Run       string               `json:"run"`
	RunDir    string               `json:"run_dir"`
	Events    string               `json:"events"`
	Workbench string               `json:"workbench,omitempty"`
	Brief     string               `json:"brief,omitempty"`
	Goal      string               `json:"goal,omitempty"`
	Verdict   string               `json:"verdict,omitempty"`
	CostUSD   float64              `json:"cost_usd"`
	Seconds   float64              `json:"seconds"`
	Steps     []harness.StepResult `json:"steps"`
}

func summarize(wf *flow.Workflow, rt *harness.Runtime, fc flow.Ctx, runErr, ctxErr error) flowOutcome {
	o := flowOutcome{Kind: "flow_result", Run: rt.RunID(), RunDir: rt.RunDir(), Events: rt.EventsPath(), Steps: rt.Results()}
	if o.Steps == nil {
		o.Steps = []harness.StepResult{}
	}
	if wb := wf.Workbench; wb != nil {
		o.Workbench = wb.Root()
		for _, p := range []struct {
			dst  *string
			name string
		}{{&o.Brief, flow.DefaultBriefName}, {&o.Goal, flow.DefaultGoalName}} {
			if f := filepath.Join(wb.Notes(), p.name); fileExists(f) {
				*p.dst = f
			}
		}
	}
	var first, last float64
	for _, s := range o.Steps {
		o.CostUSD += s.CostUSD
		if first == 0 || s.StartedAt < first {
			first = s.StartedAt
		}
		if s.EndedAt > last {
			last = s.EndedAt
		}
	}
	o.Seconds = last - first
	if v, ok := fc[flow.VerdictKey].(flow.Verdict); ok {
		o.Verdict = v.State
	}
	var se *flow.StepError
	switch {
	case ctxErr != nil || errors.Is(runErr, context.Canceled):
		o.ExitCode, o.Error = exitInterrupted, "interrupted; run the same command again to pick up where it stopped"
	case fc != nil && fc.Aborted() != "":
		o.ExitCode, o.Error = exitAborted, "aborted: "+fc.Aborted()
	case errors.As(runErr, &se) && se.Aborted != "":
		o.ExitCode, o.Error = exitAborted, "aborted: "+se.Aborted
	case runErr != nil:
		o.ExitCode, o.Error = exitFailed, runErr.Error()
	case fc != nil && fc.String(flow.KeyFailed) != "":
		name := fc.String(flow.KeyFailed)
		o.ExitCode, o.Error = exitFailed, "step "+name+" failed"
		for _, s := range o.Steps {
			if s.Step == name && s.Error != "" {
				o.Error += ": " + s.Error
			}
		}
	default:
		o.OK = true
	}
	return o
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func writeJSONLine(w io.Writer, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"kind": "error", "error": err.Error()})
	}
	w.Write(append(b, '\n'))
}
