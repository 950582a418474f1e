package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/scripted"
)

// demoAsk is what the person "asks" in the demo.
const demoAsk = "在工作区写一个 hello.txt,再生成一份 1 到 2000 的编号清单"

func init() {
	register(&cli.Command{
		Name:  "demo",
		Usage: "the whole starter flow, offline, against the built-in scripted model",
		Description: `Runs clarify → goal → work under the goal guard on the real claude CLI, with
a scripted model standing in for the API (no key, no network, no spend), in a
temporary workspace it keeps for you to look at. You will see: the clarifier
asking a question (answered by the demo), the goal being set, the coordinator
trying to edit a file itself and being denied, a delegation to a coder
subagent, a long command output spilled to the workbench, and the judge
rejecting the first round, then accepting.

Examples:
   flower demo
   flower demo --json | jq -c '{kind, step}'`,
		Flags:  []cli.Flag{flagStepJSON, flagStepClaude, flagStepHook},
		Action: demo,
	})
}

func demo(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("demo takes no arguments")
	}
	root, err := os.MkdirTemp("", "flower-demo-")
	if err != nil {
		return err
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

	jsonOut := c.Bool(flagStepJSON.Name) || !isTTY(c.App.Writer)
	so := flow.DefaultStarterOptions()
	so.Workspace, so.RunDir, so.Timeout = ws, runDir, 30*time.Second
	so.Answerer = demoAnswers{out: c.App.ErrWriter}
	ro := runtimeOptions(ws)
	ro.RunDir, ro.Claude, ro.HookPath = runDir, c.String(flagStepClaude.Name), c.String(flagStepHook.Name)
	ro.Env = scripted.OfflineEnv(os.Environ(), home, model.URL())
	if !jsonOut {
		fmt.Fprintf(c.App.Writer, "flower demo — workspace %s\nask: %s\n\n", ws, demoAsk)
	}
	out, err := runStarter(c, demoAsk, so, ro, jsonOut)
	if err != nil {
		return err
	}
	if !jsonOut {
		fmt.Fprintf(c.App.Writer, `
Where to look:
  the work            %s  (hello.txt, numbers.txt)
  the brief and goal  %s
  the Q&A log         %s
  spilled output      %s
  every event         %s
  the run             flower runs show --run-dir %s
  what the model saw  %d requests to the scripted model
`, ws, filepath.Join(out.Workbench, "notes"), filepath.Join(out.Workbench, "notes", flow.DefaultLogName),
			filepath.Join(out.Workbench, "spill"), out.Events, runDir, len(model.Requests()))
	}
	if out.ExitCode != exitOK {
		return &flowExit{code: out.ExitCode, msg: out.Error}
	}
	return nil
}
