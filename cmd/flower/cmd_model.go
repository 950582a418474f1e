package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/scripted"
)

var (
	flagModelScript  = &cli.StringFlag{Name: "script", Usage: "script `FILE` (JSON or YAML), required", EnvVars: []string{"FLOWER_MODEL_SCRIPT"}}
	flagModelAddr    = &cli.StringFlag{Name: "addr", Value: "127.0.0.1:0", Usage: "listen `ADDR` (port 0 picks a free one)", EnvVars: []string{"FLOWER_MODEL_ADDR"}}
	flagModelRecord  = &cli.StringFlag{Name: "record", Usage: "append every request as a JSON line to `FILE`", EnvVars: []string{"FLOWER_MODEL_RECORD"}}
	flagModelVerbose = &cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "log one line per request (conversation, reply index, model) to stderr", EnvVars: []string{"FLOWER_MODEL_VERBOSE"}}
)

func init() {
	register(&cli.Command{
		Name:  "model",
		Usage: "the scripted Anthropic Messages API, for offline runs and tests",
		Subcommands: []*cli.Command{{
			Name:  "serve",
			Usage: "serve a script until interrupted",
			Description: `Serves POST /v1/messages (streaming and not) and count_tokens from a script.

Example:
   flower model serve --script demo.yaml --addr 127.0.0.1:8089 &
   ANTHROPIC_BASE_URL=http://127.0.0.1:8089 ANTHROPIC_API_KEY=sk-test claude -p hello

A script routes each request to a conversation (by system prompt, first user
message or model) and gives its replies in order. Every new claude session
starts each conversation from its first reply, so one script serves any
number of runs; claude's helper requests (session titles and the like) get
a built-in answer and use up no reply. -v logs one line per request.
   conversations:
     - name: main
       match: {first_user: hello}
       replies:
         - tool_use: {name: Bash, input: {command: "echo hi"}}
         - text: done
         - fault: {status: 529}`,
			Flags:  []cli.Flag{flagModelScript, flagModelAddr, flagModelRecord, flagModelVerbose},
			Action: modelServe,
		}},
	})
}

func modelServe(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("model serve takes no arguments, got %q", c.Args().First())
	}
	path := c.String(flagModelScript.Name)
	if path == "" {
		return usagef("model serve needs --script FILE")
	}
	s, err := scripted.Load(path)
	if err != nil {
		return err
	}
	var opts []scripted.Option
	if p := c.String(flagModelRecord.Name); p != "" {
		opts = append(opts, scripted.WithRecordFile(p))
	}
	if c.Bool(flagModelVerbose.Name) {
		opts = append(opts, scripted.WithLog(c.App.ErrWriter))
	}
	srv, err := scripted.Start(s, c.String(flagModelAddr.Name), opts...)
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Fprintf(c.App.Writer, "scripted model listening on %s\n", srv.URL())
	<-c.Context.Done()
	return nil
}
