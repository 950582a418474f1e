package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/scripted"
)

// modelServeOptions are the options of `flower model serve`.
type modelServeOptions struct {
	Script, Addr, Record string
	Verbose              bool
	Args                 []string
}

func newModelCmd(e *cmdEnv) *cli.Command {
	o := &modelServeOptions{}
	return &cli.Command{
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
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "script", Usage: "script `FILE` (JSON or YAML), required", EnvVars: []string{"FLOWER_MODEL_SCRIPT"}, Destination: &o.Script},
				&cli.StringFlag{Name: "addr", Value: "127.0.0.1:0", Usage: "listen `ADDR` (port 0 picks a free one)", EnvVars: []string{"FLOWER_MODEL_ADDR"}, Destination: &o.Addr},
				&cli.StringFlag{Name: "record", Usage: "append every request as a JSON line to `FILE`", EnvVars: []string{"FLOWER_MODEL_RECORD"}, Destination: &o.Record},
				&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "log one line per request (conversation, reply index, model) to stderr", EnvVars: []string{"FLOWER_MODEL_VERBOSE"}, Destination: &o.Verbose},
			},
			Action: func(c *cli.Context) error {
				o.Args = c.Args().Slice()
				return e.do(o, func() error { return runModelServe(c.Context, e, o) })
			},
		}},
	}
}

func runModelServe(ctx context.Context, e *cmdEnv, o *modelServeOptions) error {
	if len(o.Args) > 0 {
		return usagef("model serve takes no arguments, got %q", o.Args[0])
	}
	path := o.Script
	if path == "" {
		return usagef("model serve needs --script FILE")
	}
	s, err := scripted.Load(path)
	if err != nil {
		return err
	}
	var opts []scripted.Option
	if p := o.Record; p != "" {
		opts = append(opts, scripted.WithRecordFile(p))
	}
	if o.Verbose {
		opts = append(opts, scripted.WithLog(e.Stderr))
	}
	srv, err := scripted.Start(s, o.Addr, opts...)
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Fprintf(e.Stdout, "scripted model listening on %s\n", srv.URL())
	<-ctx.Done()
	return nil
}
