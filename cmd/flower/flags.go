package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/harness"
)

// The flags several commands share are built by these constructors, one
// fresh flag per command, each writing into that command's options. Every
// flag has a FLOWER_* variable (TestEveryFlagHasAnEnvVar holds it).

func workspaceFlag(dst *string, usage string) cli.Flag {
	return &cli.StringFlag{Name: "workspace", Aliases: []string{"C"}, Value: ".", Usage: usage, EnvVars: []string{"FLOWER_WORKSPACE"}, Destination: dst}
}

func runDirFlag(dst *string) cli.Flag {
	return &cli.StringFlag{Name: "run-dir", Usage: "run `DIR` (manifest.json, sessions.db, events); default <workspace>/.flower/runs", EnvVars: []string{"FLOWER_RUN_DIR"}, Destination: dst}
}

func claudeFlag(dst *string) cli.Flag {
	return &cli.StringFlag{Name: "claude", Usage: "claude binary `PATH`", EnvVars: []string{"FLOWER_CLAUDE"}, Destination: dst}
}

func hookFlag(dst *string) cli.Flag {
	return &cli.StringFlag{Name: "hook", Usage: "flower-hook binary `PATH`", EnvVars: []string{"FLOWER_HOOK"}, Destination: dst}
}

func modelFlag(dst *string) cli.Flag {
	return &cli.StringFlag{Name: "model", Usage: "model `NAME`", EnvVars: []string{"FLOWER_MODEL"}, Destination: dst}
}

func instructionsFlag(dst *string) cli.Flag {
	return &cli.StringFlag{Name: "instructions", Usage: "extra instructions `TEXT` for the role", EnvVars: []string{"FLOWER_INSTRUCTIONS"}, Destination: dst}
}

func jsonFlag(dst *bool, usage string) cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: usage, EnvVars: []string{"FLOWER_JSON"}, Destination: dst}
}

func isolateFlag(dst *bool) cli.Flag {
	return &cli.BoolFlag{Name: "isolate", Usage: "the coder works in its own git worktree (the workspace must be a git repo)", EnvVars: []string{"FLOWER_ISOLATE"}, Destination: dst}
}

// dirList is a repeatable folder flag (--allow-dir A --allow-dir B; one
// value may list several separated by the OS's list separator, as
// FLOWER_ALLOW_DIR=A:B does).
type dirList []string

func (d *dirList) Set(v string) error {
	for _, p := range filepath.SplitList(v) {
		if p = strings.TrimSpace(p); p != "" {
			*d = append(*d, p)
		}
	}
	return nil
}

func (d *dirList) String() string { return strings.Join(*d, string(filepath.ListSeparator)) }

// trustAPIFlag is the flag half of the opt-in that lets the workspace's
// settings choose the API server, key, model or proxy; the other half is
// FLOWER_TRUST_WORKSPACE_API=1 in the environment (harness.CheckAuthority).
func trustAPIFlag(dst *bool) cli.Flag {
	return &cli.BoolFlag{Name: "trust-workspace-api", Usage: "let the workspace's .claude settings choose the API server, key, model or proxy (needs " + harness.TrustWorkspaceEnv + "=1 too)", Destination: dst}
}

func allowDirFlag(dst *dirList) cli.Flag {
	return &cli.GenericFlag{Name: "allow-dir", Usage: "let the agents' write tools also write in `DIR` (repeatable; the fence otherwise keeps them to the workspace and the workbench)", EnvVars: []string{"FLOWER_ALLOW_DIR"}, Value: dst}
}

// allowDirs checks the --allow-dir folders: each must be an existing
// directory (a typo would otherwise widen nothing, silently); they are
// returned absolute.
func allowDirs(dirs dirList) ([]string, error) {
	var out []string
	for _, d := range dirs {
		a, err := filepath.Abs(d)
		if err != nil {
			return nil, usagef("--allow-dir %s: %v", d, err)
		}
		if st, err := os.Stat(a); err != nil || !st.IsDir() {
			return nil, usagef("--allow-dir %s is not an existing directory (create it first, or drop the flag)", d)
		}
		out = append(out, a)
	}
	return out, nil
}

// resumePolicyFlags are the resume policies, spelled alike in `flower step`
// and `flower sessions show|report`, so a preview shows that step's resume.
func resumePolicyFlags(trim, noEphemeral *bool, keepDenials *int) []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "trim", Usage: "trim large tool results on resume", EnvVars: []string{"FLOWER_TRIM"}, Destination: trim},
		&cli.BoolFlag{Name: "no-ephemeral", Usage: "keep stale ephemeral command results on resume", EnvVars: []string{"FLOWER_NO_EPHEMERAL"}, Destination: noEphemeral},
		&cli.IntFlag{Name: "keep-denials", Value: 1, Usage: "permission denials `N` kept on resume", EnvVars: []string{"FLOWER_KEEP_DENIALS"}, Destination: keepDenials},
	}
}

const (
	wsUsageStep   = "workspace `DIR` the step works in"
	wsUsageRuns   = "workspace `DIR` whose runs to read (its .flower/runs)"
	wsUsageFlow   = "workspace `DIR` the flow works in"
	workspaceHome = ".flower" // the workbench and, by default, the runs live here
)

// place is a checked workspace and the run dir that goes with it.
type place struct {
	Workspace string // absolute, an existing directory
	RunDir    string // as given, or <workspace>/.flower/runs
}

// resolvePlace checks -C (a missing or non-directory workspace is a usage
// error naming it; nothing is created) and picks the run dir: --run-dir as
// given, else the workspace's own .flower/runs.
func resolvePlace(workspace, runDir string) (place, error) {
	if workspace == "" {
		workspace = "."
	}
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return place{}, err
	}
	st, err := os.Stat(ws)
	switch {
	case err != nil && os.IsNotExist(err):
		return place{}, usagef("workspace %s does not exist (-C takes an existing directory)", workspace)
	case err != nil:
		return place{}, usagef("workspace %s: %v", workspace, err)
	case !st.IsDir():
		return place{}, usagef("workspace %s is not a directory (-C takes a directory)", workspace)
	}
	if runDir == "" {
		runDir = filepath.Join(ws, workspaceHome, "runs")
	}
	return place{Workspace: ws, RunDir: runDir}, nil
}

// prepare makes the run dir for a command that writes. When it lies in the
// workspace's .flower, that folder gets a .gitignore of "*", so nothing of
// flower's lands in the user's repository.
func (p place) prepare() error {
	home := filepath.Join(p.Workspace, workspaceHome)
	if rel, err := filepath.Rel(home, p.RunDir); err == nil && !strings.HasPrefix(rel, "..") {
		if err := ensureHome(p.Workspace); err != nil {
			return err
		}
	}
	return os.MkdirAll(p.RunDir, 0o700)
}

// ensureHome makes the workspace's .flower folder (0700) with a .gitignore
// of "*", so that nothing of flower's lands in the user's repository.
func ensureHome(workspace string) error {
	home := filepath.Join(workspace, workspaceHome)
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	gi := filepath.Join(home, ".gitignore")
	if _, err := os.Stat(gi); os.IsNotExist(err) {
		if err := os.WriteFile(gi, []byte("*\n"), 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", gi, err)
		}
	}
	return nil
}

// noArgs is the usage error of a command that takes no arguments.
func noArgs(c *cli.Context, hint string) error {
	if c.NArg() == 0 {
		return nil
	}
	msg := fmt.Sprintf("%s takes no arguments, got %q", c.Command.FullName(), c.Args().First())
	if hint != "" {
		msg += " (" + hint + ")"
	}
	return usagef("%s", msg)
}

// onlineTimeoutFlag bounds the wait for the API between attempts
// (Resilience.OnlineTimeout); 0, the default, waits until it answers.
func onlineTimeoutFlag(dst *time.Duration) cli.Flag {
	return &cli.DurationFlag{Name: "online-timeout", Usage: "give up when the API stays unreachable for `D` between attempts, e.g. 10m (0: wait until it answers; bound it for unattended runs)",
		EnvVars: []string{"FLOWER_ONLINE_TIMEOUT"}, Destination: dst}
}

// idleTimeoutFlag is the idle limit of an attempt (Resilience.IdleTimeout):
// no stream byte from claude for D while no tool or subagent runs ends the
// attempt as transient, and the next one resumes the session.
func idleTimeoutFlag(dst *time.Duration) cli.Flag {
	return &cli.DurationFlag{Name: "idle-timeout", Value: harness.DefaultIdleTimeout,
		Usage:   "end an attempt that gets no stream byte from claude for `D` while no tool or subagent runs, and resume its session (0: no limit)",
		EnvVars: []string{"FLOWER_IDLE_TIMEOUT"}, Destination: dst}
}

// idleLimit is the flag's value as Resilience.IdleTimeout (0 there is the
// default; off is negative).
func idleLimit(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// storeFlag names the session store every store-using command reads and
// writes: one SQLite file per run dir by default, or a database shared by
// many machines.
func storeFlag(dst *string) cli.Flag {
	return &cli.StringFlag{Name: "store", Usage: "session store `URL`: a file path, sqlite://PATH or postgres://… (default <run-dir>/sessions.db)", EnvVars: []string{"FLOWER_STORE"}, Destination: dst}
}

func budgetFlag(dst *float64) cli.Flag {
	return &cli.Float64Flag{Name: "max-budget-usd", Usage: "stop the flow once its steps have cost `X` dollars (each step gets what is left)", EnvVars: []string{"FLOWER_MAX_BUDGET_USD"}, Destination: dst}
}
