package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/internal/child"
	"github.com/flowerhq/flower/internal/pinned"
)

// doctorOptions are the options of `flower doctor`.
type doctorOptions struct {
	Workspace, Claude, Hook string
	JSON                    bool
	Args                    []string
}

func newDoctorCmd(e *cmdEnv) *cli.Command {
	o := &doctorOptions{}
	return &cli.Command{
		Name:  "doctor",
		Usage: "check claude, credentials, flower-hook and the guards plugin, and run the guard self-test",
		Description: `Checks, in order: the workspace (-C), the claude CLI (found, and its version
against the pinned ` + pinned.ClaudeVersion + `; another version is a warning), credentials
(on macOS the Keychain too), flower-hook, the guards plugin (embedded in flower
and written into your cache folder, or $FLOWER_PLUGIN_DIR), and a guard self-test:
a canary step against a built-in scripted model (no network, no spend) in which
a main-thread Bash must be denied and a subagent's Bash must pass. The
self-test runs in a temporary folder: nothing lands in the workspace. Exit 1
if any check fails.

Examples:
   flower doctor
   flower doctor -C ~/src/app --claude ~/bin/claude`,
		Flags: []cli.Flag{workspaceFlag(&o.Workspace, "workspace `DIR` to check"), claudeFlag(&o.Claude), hookFlag(&o.Hook),
			jsonFlag(&o.JSON, "print one JSON object: ok and every check")},
		Action: func(c *cli.Context) error {
			o.Args = c.Args().Slice()
			return e.do(o, func() error { return runDoctor(c.Context, e, o) })
		},
	}
}

// errDoctor marks a doctor run with a failed check; the details were printed.
var errDoctor = errors.New("doctor: a check failed")

func runDoctor(ctx context.Context, e *cmdEnv, o *doctorOptions) error {
	if len(o.Args) > 0 {
		return usagef("doctor takes no arguments")
	}
	pl, err := resolvePlace(o.Workspace, "")
	if err != nil {
		return err
	}
	w := e.human(e.Stdout)
	if o.JSON {
		w = io.Discard
	}
	failed := false
	rep := doctorJSON{Kind: "doctor", Checks: []doctorCheck{}}
	check := func(name string, detail string, err error) {
		if err != nil {
			failed = true
			rep.Checks = append(rep.Checks, doctorCheck{Name: name, Status: "fail", Detail: userMessage(err)})
			fmt.Fprintf(w, "✗ %-12s %s\n", name, userMessage(err))
			return
		}
		rep.Checks = append(rep.Checks, doctorCheck{Name: name, Status: "ok", Detail: detail})
		fmt.Fprintf(w, "✓ %-12s %s\n", name, detail)
	}
	warn := func(name, detail string) { // passes, with a word
		rep.Checks = append(rep.Checks, doctorCheck{Name: name, Status: "warning", Detail: detail})
		fmt.Fprintf(w, "! %-12s %s\n", name, detail)
	}

	check("workspace", pl.Workspace+" (runs in "+pl.RunDir+")", nil)
	claude, err := harness.FindClaude(o.Claude, e.Getenv)
	check("claude", claude, err)
	if err == nil {
		v, verr := claudeVersion(ctx, claude)
		switch {
		case verr != nil:
			check("version", "", verr)
		case !strings.HasPrefix(v, pinned.ClaudeVersion):
			warn("version", fmt.Sprintf("%s (flower is tested on %s; scripts/setup.sh installs it)", v, pinned.ClaudeVersion))
		default:
			check("version", v, nil)
		}
	}
	check("credentials", "found", harness.CheckCredentials(e.Getenv))
	hook, herr := harness.FindHook(o.Hook)
	check("flower-hook", hook, herr)
	plugin, perr := pluginDir(e.Getenv, o.Hook)
	check("plugin", plugin, perr)
	if path := userScopePlugin(e.Getenv); path != "" {
		warn("plugin scope", "the guards plugin is enabled at user scope ("+path+"): every claude session of yours is delegate-only; reinstall it with `claude plugin install flower@flower --scope project`")
	}
	if serr := sandboxCheck(e)(); serr != nil && e.Getenv("FLOWER_SANDBOX") != sandboxRequire {
		warn("sandbox", "look-only rests on the classifier alone: "+serr.Error())
	} else {
		check("sandbox", "read-only glances run in bubblewrap", serr)
	}
	if err == nil && herr == nil {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		err := e.SelfTest(ctx, claude, hook)
		if errors.Is(err, context.Canceled) {
			return err // interrupted: exit 130, no verdict on the guards
		}
		check("self-test", "main-thread Bash denied, subagent Bash ran", err)
	}
	if o.JSON {
		rep.OK = !failed
		if err := writeJSON(e.Stdout, rep); err != nil {
			return err
		}
	}
	if failed {
		return errDoctor
	}
	return nil
}

// doctorJSON is `flower doctor --json`: every check in order, and whether
// all passed (a warning passes).
type doctorJSON struct {
	Kind   string        `json:"kind"` // "doctor"
	OK     bool          `json:"ok"`
	Checks []doctorCheck `json:"checks"`
}

type doctorCheck struct {
	Name   string `json:"name"`
	Status string `json:"status"` // ok, warning or fail
	Detail string `json:"detail"`
}

func claudeVersion(ctx context.Context, claude string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := child.Command(ctx, claude, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", claude, err)
	}
	return strings.TrimSpace(string(out)), nil
}
