package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
)

// Flags of `flower step` (design.md §3); every one has a FLOWER_* variable.
var (
	flagStepWorkspace    = &cli.StringFlag{Name: "workspace", Aliases: []string{"C"}, Value: ".", Usage: "workspace `DIR` the step works in", EnvVars: []string{"FLOWER_WORKSPACE"}}
	flagStepRunDir       = &cli.StringFlag{Name: "run-dir", Value: "runs", Usage: "run `DIR` (manifest.json, sessions.db, events)", EnvVars: []string{"FLOWER_RUN_DIR"}}
	flagStepClaude       = &cli.StringFlag{Name: "claude", Usage: "claude binary `PATH`", EnvVars: []string{"FLOWER_CLAUDE"}}
	flagStepHook         = &cli.StringFlag{Name: "hook", Usage: "flower-hook binary `PATH`", EnvVars: []string{"FLOWER_HOOK"}}
	flagStepModel        = &cli.StringFlag{Name: "model", Usage: "model `NAME`", EnvVars: []string{"FLOWER_MODEL"}}
	flagStepInstructions = &cli.StringFlag{Name: "instructions", Usage: "extra instructions `TEXT` for the role", EnvVars: []string{"FLOWER_INSTRUCTIONS"}}
	flagStepRole         = &cli.StringFlag{Name: "role", Value: "plain", Usage: "plain|coordinator|worker|clarify|judge|oracle", EnvVars: []string{"FLOWER_ROLE"}}
	flagStepName         = &cli.StringFlag{Name: "name", Usage: "step `NAME` (default: the role)", EnvVars: []string{"FLOWER_STEP_NAME"}}
	flagStepResume       = &cli.StringFlag{Name: "resume", Usage: "resume session `ID`", EnvVars: []string{"FLOWER_RESUME"}}
	flagStepFork         = &cli.BoolFlag{Name: "fork", Usage: "with --resume: fork into a new session", EnvVars: []string{"FLOWER_FORK"}}
	flagStepResumeAt     = &cli.StringFlag{Name: "resume-at", Usage: "with --resume: replay history up to message `UUID`", EnvVars: []string{"FLOWER_RESUME_AT"}}
	flagStepMaxTurns     = &cli.IntFlag{Name: "max-turns", Usage: "turn limit `N` (0: the role's)", EnvVars: []string{"FLOWER_MAX_TURNS"}}
	flagStepMaxBudget    = &cli.Float64Flag{Name: "max-budget-usd", Usage: "budget `X` in USD (0: the role's)", EnvVars: []string{"FLOWER_MAX_BUDGET_USD"}}
	flagStepMaxAttempts  = &cli.IntFlag{Name: "max-attempts", Value: harness.NewResilience().MaxAttempts, Usage: "attempts `N` on retryable failures", EnvVars: []string{"FLOWER_MAX_ATTEMPTS"}}
	flagStepRetryDelay   = &cli.DurationFlag{Name: "retry-delay", Value: harness.NewResilience().BaseDelay, Usage: "first back-off `D` (doubles)", EnvVars: []string{"FLOWER_RETRY_DELAY"}}
	flagStepTrim         = &cli.BoolFlag{Name: "trim", Usage: "trim large tool results on resume", EnvVars: []string{"FLOWER_TRIM"}}
	flagStepNoEphemeral  = &cli.BoolFlag{Name: "no-ephemeral", Usage: "keep stale ephemeral command results on resume", EnvVars: []string{"FLOWER_NO_EPHEMERAL"}}
	flagStepKeepDenials  = &cli.IntFlag{Name: "keep-denials", Value: 1, Usage: "permission denials `N` kept on resume", EnvVars: []string{"FLOWER_KEEP_DENIALS"}}
	flagStepWorkbench    = &cli.BoolFlag{Name: "workbench", Usage: "give the step a workbench (<run-dir>/workbench)", EnvVars: []string{"FLOWER_WORKBENCH"}}
	flagStepSpill        = &cli.IntFlag{Name: "spill-threshold", Value: 4000, Usage: "spill tool output over `N` chars to the workbench (0: off)", EnvVars: []string{"FLOWER_SPILL_THRESHOLD"}}
	flagStepNoHandoff    = &cli.BoolFlag{Name: "no-handoff", Usage: "do not hand off to a fresh session when the context is full", EnvVars: []string{"FLOWER_NO_HANDOFF"}}
	flagStepJSON         = &cli.BoolFlag{Name: "json", Usage: "print events as JSON lines, then the StepResult", EnvVars: []string{"FLOWER_JSON"}}
)

func init() {
	register(&cli.Command{
		Name:      "step",
		Usage:     "run one step (one claude process, made resilient)",
		ArgsUsage: "PROMPT|-",
		Description: `Runs one Runtime.Run: the role's AgentSpec on the real claude CLI, with
retries, interrupts and context handoffs. Prints the final text; with --json,
one JSON line per event and the StepResult as the last line. The step is a
run of its own: a row in <run-dir>/manifest.json, events in
<run-dir>/<run>/events.jsonl. Exit 0 done, 1 failed, 2 usage, 130 interrupted.`,
		Flags: []cli.Flag{
			flagStepWorkspace, flagStepRunDir, flagStepClaude, flagStepHook, flagStepModel, flagStepInstructions,
			flagStepRole, flagStepName, flagStepResume, flagStepFork, flagStepResumeAt, flagStepMaxTurns,
			flagStepMaxBudget, flagStepMaxAttempts, flagStepRetryDelay, flagStepTrim, flagStepNoEphemeral,
			flagStepKeepDenials, flagStepWorkbench, flagStepSpill, flagStepNoHandoff, flagStepJSON,
		},
		Action: stepAction,
	})
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
	"judge":   func(o flow.RoleOptions) harness.AgentSpec { return flow.Judge("judge", nil, o) },
	"oracle":  func(o flow.RoleOptions) harness.AgentSpec { return flow.Oracle("", o) },
}

func stepAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("step takes one PROMPT (or - for stdin), got %d arguments", c.NArg())
	}
	prompt := c.Args().First()
	if prompt == "-" {
		data, err := io.ReadAll(c.App.Reader)
		if err != nil {
			return fmt.Errorf("step: read prompt: %w", err)
		}
		prompt = string(data)
	}
	if strings.TrimSpace(prompt) == "" {
		return usagef("step: empty prompt")
	}
	mk, ok := stepRoles[c.String(flagStepRole.Name)]
	if !ok {
		return usagef("step: unknown --role %q (plain, coordinator, worker, clarify, judge, oracle)", c.String(flagStepRole.Name))
	}
	spec := mk(flow.RoleOptions{Instructions: c.String(flagStepInstructions.Name), Model: c.String(flagStepModel.Name)})
	if n := c.Int(flagStepMaxTurns.Name); n > 0 {
		spec.MaxTurns = n
	}
	if x := c.Float64(flagStepMaxBudget.Name); x > 0 {
		spec.MaxBudgetUSD = x
	}

	o := runtimeOptions(c.String(flagStepWorkspace.Name))
	o.RunDir = c.String(flagStepRunDir.Name)
	o.Claude = c.String(flagStepClaude.Name)
	o.HookPath = c.String(flagStepHook.Name)
	o.Trim = c.Bool(flagStepTrim.Name)
	o.Ephemeral = !c.Bool(flagStepNoEphemeral.Name)
	o.KeepDenials = c.Int(flagStepKeepDenials.Name)
	o.SpillThreshold = c.Int(flagStepSpill.Name)
	o.Resilience.MaxAttempts = c.Int(flagStepMaxAttempts.Name)
	o.Resilience.BaseDelay = c.Duration(flagStepRetryDelay.Name)
	o.Handoff.Enabled = !c.Bool(flagStepNoHandoff.Name)
	if c.Bool(flagStepWorkbench.Name) {
		o.Workbench = harness.RunDirWorkbench(o.Workspace, o.RunDir)
	}

	if spec.DelegateOnly && o.Workbench == nil {
		// Seed: the delegate guard comes with the workbench hooks, and a
		// delegate_only role skips the whitelist: no wall at all.
		fmt.Fprintln(c.App.ErrWriter, "flower: warning: --role "+c.String(flagStepRole.Name)+" without --workbench runs with no delegate guard")
	}
	rt, err := harness.New(c.Context, o)
	if err != nil {
		return err
	}
	defer rt.Close()
	// At a terminal the first Ctrl-C asks for words and resumes the step
	// with them; elsewhere (or the second time) it cancels: exit 130.
	tty := !c.Bool(flagStepJSON.Name) && isTTY(c.App.Reader)
	ctx, stop := interruptible(c.Context, rt, c.App.Reader, c.App.ErrWriter, tty)
	defer stop()

	out := c.App.Writer
	var mu sync.Mutex
	enc := json.NewEncoder(out)
	ro := harness.RunOptions{
		StepName: c.String(flagStepName.Name), Resume: c.String(flagStepResume.Name),
		Fork: c.Bool(flagStepFork.Name), ResumeAt: c.String(flagStepResumeAt.Name),
	}
	if c.Bool(flagStepJSON.Name) {
		ro.OnEvent = func(ev harness.Event) {
			mu.Lock()
			defer mu.Unlock()
			enc.Encode(ev)
		}
	}
	res, err := rt.Run(ctx, spec, prompt, ro)
	if err != nil {
		return err
	}
	mu.Lock()
	if c.Bool(flagStepJSON.Name) {
		enc.Encode(res)
	} else if res.Text != "" {
		fmt.Fprintln(out, res.Text)
	}
	mu.Unlock()
	switch {
	case res.OK:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("step %s: %w", res.Step, context.Canceled)
	default:
		return &stepFailed{res}
	}
}
