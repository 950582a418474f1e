package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
)

// stepOptions are the options of `flower step`.
type stepOptions struct {
	Workspace, RunDir, Claude, Hook, Model, Instructions string
	Role, Name, Resume, ResumeAt, Store, Sandbox         string
	Fork, Trim, NoEphemeral, Workbench, NoHandoff, JSON  bool
	MaxTurns, MaxAttempts, KeepDenials, Spill            int
	MaxBudget                                            float64
	RetryDelay, OnlineTimeout, IdleTimeout               time.Duration
	AllowDirs                                            dirList
	TrustAPI                                             bool
	Prompt                                               []string
}

func newStepCmd(e *cmdEnv) *cli.Command {
	o := &stepOptions{}
	res := harness.NewResilience()
	flags := []cli.Flag{
		workspaceFlag(&o.Workspace, wsUsageStep), runDirFlag(&o.RunDir), claudeFlag(&o.Claude), hookFlag(&o.Hook), allowDirFlag(&o.AllowDirs), trustAPIFlag(&o.TrustAPI),
		modelFlag(&o.Model), instructionsFlag(&o.Instructions),
		&cli.StringFlag{Name: "role", Value: "plain", Usage: "the role `ROLE` the step plays: plain|coordinator|worker|clarify|judge|oracle", EnvVars: []string{"FLOWER_ROLE"}, Destination: &o.Role},
		&cli.StringFlag{Name: "name", Usage: "step `NAME` (default: the role)", EnvVars: []string{"FLOWER_STEP_NAME"}, Destination: &o.Name},
		&cli.StringFlag{Name: "resume", Usage: "resume session `ID`", EnvVars: []string{"FLOWER_RESUME"}, Destination: &o.Resume},
		&cli.BoolFlag{Name: "fork", Usage: "with --resume: fork into a new session", EnvVars: []string{"FLOWER_FORK"}, Destination: &o.Fork},
		&cli.StringFlag{Name: "resume-at", Usage: "with --resume: replay history up to message `UUID`", EnvVars: []string{"FLOWER_RESUME_AT"}, Destination: &o.ResumeAt},
		&cli.IntFlag{Name: "max-turns", Usage: "turn limit `N` (0: the role's)", EnvVars: []string{"FLOWER_MAX_TURNS"}, Destination: &o.MaxTurns},
		&cli.Float64Flag{Name: "max-budget-usd", Usage: "budget `X` in USD (0: the role's)", EnvVars: []string{"FLOWER_MAX_BUDGET_USD"}, Destination: &o.MaxBudget},
		&cli.IntFlag{Name: "max-attempts", Value: res.MaxAttempts, Usage: "attempts `N` on retryable failures", EnvVars: []string{"FLOWER_MAX_ATTEMPTS"}, Destination: &o.MaxAttempts},
		&cli.DurationFlag{Name: "retry-delay", Value: res.BaseDelay, Usage: "first back-off `D`, e.g. 2s (doubles)", EnvVars: []string{"FLOWER_RETRY_DELAY"}, Destination: &o.RetryDelay},
	}
	flags = append(flags, resumePolicyFlags(&o.Trim, &o.NoEphemeral, &o.KeepDenials)...)
	flags = append(flags,
		&cli.BoolFlag{Name: "workbench", Usage: "give the step a workbench (<run-dir>/workbench)", EnvVars: []string{"FLOWER_WORKBENCH"}, Destination: &o.Workbench},
		&cli.IntFlag{Name: "spill-threshold", Value: 4000, Usage: "spill tool output over `N` chars to the workbench (0: off)", EnvVars: []string{"FLOWER_SPILL_THRESHOLD"}, Destination: &o.Spill},
		&cli.BoolFlag{Name: "no-handoff", Usage: "do not hand off to a fresh session when the context is full", EnvVars: []string{"FLOWER_NO_HANDOFF"}, Destination: &o.NoHandoff},
		jsonFlag(&o.JSON, "print events as JSON lines, then the step_result"),
		storeFlag(&o.Store), sandboxFlag(&o.Sandbox),
		onlineTimeoutFlag(&o.OnlineTimeout), idleTimeoutFlag(&o.IdleTimeout),
	)
	return &cli.Command{
		Name:      "step",
		Usage:     "run one step (one claude process, made resilient)",
		ArgsUsage: "PROMPT|-",
		Description: `Runs one claude process for the role (its prompt, tools and guards) on the
real claude CLI, with retries, interrupts and context handoffs. Prints the final text; with --json,
one JSON line per event and the step_result as the last line. The step is a
run of its own: a row in <run-dir>/manifest.json, events in
<run-dir>/<run>/events.jsonl (run dir: <workspace>/.flower/runs by default).
Flags go anywhere; -- ends them. Exit 0 done, 1 failed, 2 usage, 130 interrupted.

Examples:
   flower step -C ~/src/app "list the failing tests" --json
   flower step --resume 3f2a… "now fix the first one"
   flower step -- "--weird prompt that starts with dashes"`,
		Flags: flags,
		Action: func(c *cli.Context) error {
			o.Prompt = c.Args().Slice()
			return e.do(o, func() error { return runStep(c.Context, e, o) })
		},
	}
}

// stepFailed is a step that ran and did not succeed: exit 1 with its error.
type stepFailed struct{ res harness.StepResult }

func (e *stepFailed) Error() string {
	return fmt.Sprintf("step %s failed: %s", e.res.Step, e.res.Error)
}
func (e *stepFailed) ExitCode() int { return exitFailed }

// stepRoles builds the AgentSpec of each --role.
var stepRoles = map[string]func(o flow.RoleOptions) harness.AgentSpec{
	"plain": func(o flow.RoleOptions) harness.AgentSpec {
		s := harness.NewAgentSpec("plain", o.Instructions)
		s.Model = o.Model
		return s
	},
	"coordinator": func(o flow.RoleOptions) harness.AgentSpec {
		workers := map[string]harness.AgentDefinition{
			"worker": flow.Worker("Does hands-on work: reads, edits, runs commands, reports back.", "", flow.WorkerOptions{}),
		}
		return flow.Coordinator("coordinator", "", workers, nil, o)
	},
	"worker": func(o flow.RoleOptions) harness.AgentSpec {
		def := flow.Worker("worker", o.Instructions, flow.WorkerOptions{Model: o.Model})
		s := harness.NewAgentSpec("worker", def.Prompt)
		s.AllowedTools = def.Tools
		s.Model = o.Model
		return s
	},
	"clarify": func(o flow.RoleOptions) harness.AgentSpec { return flow.Clarify("clarify", nil, o) },
	"judge": func(o flow.RoleOptions) harness.AgentSpec {
		s := flow.Judge("judge", nil, o)
		s.JSONSchema = flow.VerdictSchema // typed, as every judge round of a flow
		return s
	},
	"oracle": func(o flow.RoleOptions) harness.AgentSpec { return flow.Oracle("", o) },
}

// runStep runs one step for o.
func runStep(ctx context.Context, e *cmdEnv, o *stepOptions) error {
	if len(o.Prompt) != 1 {
		return usagef("step takes one PROMPT (or - for stdin), got %d arguments; quote the prompt", len(o.Prompt))
	}
	prompt := o.Prompt[0]
	if prompt == "-" {
		data, err := io.ReadAll(e.Stdin)
		if err != nil {
			return fmt.Errorf("reading the prompt from stdin: %w", err)
		}
		prompt = string(data)
	}
	if strings.TrimSpace(prompt) == "" {
		return usagef("empty prompt")
	}
	mk, ok := stepRoles[o.Role]
	if !ok {
		return usagef("unknown --role %q (plain, coordinator, worker, clarify, judge, oracle)", o.Role)
	}
	pl, err := resolvePlace(o.Workspace, o.RunDir)
	if err != nil {
		return err
	}
	spec := mk(flow.RoleOptions{Instructions: o.Instructions, Model: o.Model})
	if o.MaxTurns > 0 {
		spec.MaxTurns = o.MaxTurns
	}
	if o.MaxBudget > 0 {
		spec.MaxBudgetUSD = o.MaxBudget
	}

	ho, err := stepRuntimeOptions(o, pl)
	if err != nil {
		return err
	}
	if err := applySandbox(o.Sandbox, &ho, e.Stderr, stepSandboxCheck(e, spec)); err != nil {
		return err
	}
	if spec.DelegateOnly && ho.Workbench == nil {
		// The delegate guard comes with the workbench hooks, and a
		// delegate_only role skips the whitelist: no wall at all.
		fmt.Fprintln(e.Stderr, "flower: warning: --role "+o.Role+" without --workbench runs with no delegate guard")
	}
	st, release, err := withStore(ctx, e, o.Store, &ho)
	if err != nil {
		return err
	}
	defer release()
	if err := pl.prepare(); err != nil {
		return err
	}
	rt, err := e.NewRuntime(ctx, ho)
	if err != nil {
		return err
	}
	defer rt.Close()
	defer recordRun(ctx, e.Stderr, st, rt)
	// At a terminal the first Ctrl-C asks for words and resumes the step
	// with them; elsewhere (or the second time) it cancels: exit 130.
	rctx, stop := interruptible(ctx, rt, flow.NewLines(e.Stdin), e.Stderr, !o.JSON && e.IsTTY(e.Stdin))
	defer stop()

	var mu sync.Mutex
	enc := json.NewEncoder(e.Stdout)
	ro := harness.RunOptions{StepName: o.Name, Resume: o.Resume, Fork: o.Fork, ResumeAt: o.ResumeAt}
	if o.JSON {
		ro.OnEvent = func(ev harness.Event) {
			mu.Lock()
			defer mu.Unlock()
			enc.Encode(eventOut(ev))
		}
	} else {
		ro.OnEvent = offlineStatus(e.Stderr, e.IsTTY(e.Stderr))
	}
	res, err := rt.Run(rctx, spec, prompt, ro)
	if err != nil {
		return err
	}
	mu.Lock()
	if o.JSON {
		enc.Encode(stepResultOut(res))
	} else {
		printStepText(e.Stdout, res)
	}
	mu.Unlock()
	switch {
	case res.OK:
		return nil
	case rctx.Err() != nil:
		return &resumeHint{err: context.Canceled, cmd: stepResumeCmd(pl, res)}
	default:
		return &stepFailed{res}
	}
}

// printStepText prints a step's text and, for a typed answer (the judge's
// verdict), its value on one line, as claude -p --json-schema prints it.
// The text is written from the string itself: fmt would copy a text that
// may be many megabytes into its buffer first.
func printStepText(w io.Writer, res harness.StepResult) {
	if res.Text != "" {
		io.WriteString(w, res.Text)
		io.WriteString(w, "\n")
	}
	var typed bytes.Buffer
	if json.Compact(&typed, res.Structured) == nil && typed.Len() > 0 {
		typed.WriteString("\n")
		typed.WriteTo(w)
	}
}

// stepRuntimeOptions are the Runtime's options for a step of o in pl.
func stepRuntimeOptions(o *stepOptions, pl place) (harness.Options, error) {
	ho := runtimeOptions(pl.Workspace)
	ho.RunDir, ho.Claude, ho.HookPath = pl.RunDir, o.Claude, o.Hook
	ho.Trim, ho.Ephemeral, ho.KeepDenials = o.Trim, !o.NoEphemeral, o.KeepDenials
	ho.SpillThreshold = o.Spill
	ho.Resilience.MaxAttempts, ho.Resilience.BaseDelay = o.MaxAttempts, o.RetryDelay
	ho.Resilience.OnlineTimeout, ho.Resilience.IdleTimeout = o.OnlineTimeout, idleLimit(o.IdleTimeout)
	ho.Handoff.Enabled = !o.NoHandoff
	ho.TrustWorkspaceAPI = o.TrustAPI
	var err error
	if ho.AllowDirs, err = allowDirs(o.AllowDirs); err != nil {
		return ho, err
	}
	if o.Workbench {
		ho.Workbench = harness.RunDirWorkbench(ho.Workspace, ho.RunDir)
	}
	return ho, nil
}

// stepSandboxCheck is the sandbox check of a step of spec: the factory's
// for a role whose main thread glances (look-only, or a delegate-only one
// with glances), none for a role whose Bash never runs in the sandbox, so
// that such a step pays no bwrap probe.
func stepSandboxCheck(e *cmdEnv, spec harness.AgentSpec) func() error {
	if spec.LookOnly || spec.DelegateOnly && spec.Glance {
		return sandboxCheck(e)
	}
	return func() error { return nil }
}

// stepResumeCmd is the command line that resumes an interrupted step.
func stepResumeCmd(pl place, res harness.StepResult) string {
	if res.SessionID == "" {
		return ""
	}
	return shellJoin([]string{"flower", "step", "-C", pl.Workspace, "--run-dir", pl.RunDir, "--resume", res.SessionID, "go on"})
}
