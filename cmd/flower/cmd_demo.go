package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/internal/demo"
	"github.com/flowerhq/flower/scripted"
)

// demoOptions are the options of `flower demo`.
type demoOptions struct {
	Claude, Hook string
	JSON, Keep   bool
	PrintScript  bool
	Args         []string
}

func newDemoCmd(e *cmdEnv) *cli.Command {
	o := &demoOptions{}
	return &cli.Command{
		Name:  "demo",
		Usage: "the whole starter flow, offline, against the built-in scripted model",
		Description: `Runs clarify → goal → work under the goal guard on the real claude CLI, with
a scripted model standing in for the API (no key, no network, no spend), in a
temporary workspace, removed afterwards unless --keep. You will see: the
clarifier asking a question (answered by the demo), the goal being set, the
coordinator trying to edit a file itself and being denied, a delegation to a
coder subagent, a long command output spilled to the workbench, and the judge
rejecting the first round, then accepting.

The scripted model's script: flower demo --print-script (a starting point
for your own, with examples/starter-flow.yaml; flower help model serve).

Examples:
   flower demo --keep
   flower demo --json | jq -c '{kind, step}'
   flower demo --print-script > my-flow.yaml`,
		Flags: []cli.Flag{jsonFlag(&o.JSON, "print events as JSON lines, the flow_result last"), claudeFlag(&o.Claude), hookFlag(&o.Hook),
			&cli.BoolFlag{Name: "keep", Usage: "keep the temporary workspace and runs to look at", EnvVars: []string{"FLOWER_KEEP"}, Destination: &o.Keep},
			&cli.BoolFlag{Name: "print-script", Usage: "print the scripted model's script (YAML) and exit; runs nothing", EnvVars: []string{"FLOWER_PRINT_SCRIPT"}, Destination: &o.PrintScript}},
		Action: func(c *cli.Context) error {
			o.Args = c.Args().Slice()
			return e.do(o, func() error { return runDemo(c.Context, e, o) })
		},
	}
}

func runDemo(ctx context.Context, e *cmdEnv, o *demoOptions) error {
	if len(o.Args) > 0 {
		return usagef("demo takes no arguments")
	}
	if o.PrintScript {
		_, err := io.WriteString(e.Stdout, demo.YAML)
		return err
	}
	root, err := os.MkdirTemp("", "flower-demo-")
	if err != nil {
		return err
	}
	if !o.Keep {
		defer os.RemoveAll(root)
	}
	ws, home, runDir := filepath.Join(root, "workspace"), filepath.Join(root, "home"), filepath.Join(root, "runs")
	for _, d := range []string{ws, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	model, err := scripted.Start(demoScript(ws), "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer model.Close()

	v := newView(e, o.JSON, false)
	jsonOut := v.json
	so := flow.DefaultStarterOptions()
	so.Workspace, so.RunDir, so.Timeout = ws, runDir, 30*time.Second
	so.Answerer = demoAnswers{}
	if jsonOut { // stdout is JSON: the question shows on stderr
		so.Answerer = demoAnswers{out: e.Stderr}
	}
	ro := runtimeOptions(ws)
	ro.RunDir, ro.Claude, ro.HookPath = runDir, o.Claude, o.Hook
	// claude's own temp folders (claude-<uid>, cc-socks) go with ours.
	ro.Env = append(scripted.OfflineEnv(os.Environ(), home, model.URL()), "TMPDIR="+root)
	if !jsonOut {
		v.print(e.Stdout, fmt.Sprintf("flower demo — workspace %s\nask: %s\n", ws, demo.Ask))
	}
	out, err := runStarter(ctx, e, demo.Ask, so, ro, runStore{}, 0, v)
	if err != nil {
		return err
	}
	if !jsonOut && o.Keep {
		v.print(e.Stdout, fmt.Sprintf(`
Where to look:
  the work            %s  (hello.txt, numbers.txt)
  the brief and goal  %s
  the Q&A log         %s
  spilled output      %s
  every event         %s
  the run             flower runs show --run-dir %s
  what the model saw  %d requests to the scripted model
`, ws, filepath.Join(out.Workbench, "notes"), filepath.Join(out.Workbench, "notes", flow.DefaultLogName),
			filepath.Join(out.Workbench, "spill"), out.Events, runDir, len(model.Requests())))
	}
	if !jsonOut && !o.Keep {
		v.print(e.Stdout, fmt.Sprintf("\n%d requests to the scripted model.\nWorkspace removed; flower demo --keep keeps it.", len(model.Requests())))
	}
	return out.exitError(jsonOut)
}
