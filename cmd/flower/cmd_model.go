package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/scripted"
)

// modelServeOptions are the options of `flower model serve`.
type modelServeOptions struct {
	Script, Cassette, Addr, Record string
	Verbose                        bool
	Args                           []string
}

// modelRecordOptions are the options of `flower model record`.
type modelRecordOptions struct {
	Upstream, Out, Addr string
	Args                []string
}

func newModelCmd(e *cmdEnv) *cli.Command {
	o := &modelServeOptions{}
	r := &modelRecordOptions{}
	return &cli.Command{
		Name:  "model",
		Usage: "the scripted Anthropic Messages API, for offline runs and tests",
		Subcommands: []*cli.Command{{
			Name:  "serve",
			Usage: "serve a script or replay a cassette until stopped",
			Description: `Serves POST /v1/messages (streaming and not) and count_tokens from a script,
or, with --cassette, replays what flower model record recorded.

Example (examples/starter-flow.yaml in flower's repository, commented, runs
the whole starter flow to achieved):
   flower model serve --script examples/starter-flow.yaml --addr 127.0.0.1:8089 &
   ANTHROPIC_BASE_URL=http://127.0.0.1:8089 ANTHROPIC_API_KEY=sk-test flower "write hello.txt"

A script routes each request to a conversation (by flower role: clarify,
goal, coordinator, coder, judge or oracle; or by system prompt, first user
message or model substrings) and gives its replies in order; a reply marked
hand_back waits for a subagent's work to come back. Every new claude session
starts each conversation from its first reply, so one script serves any
number of runs; claude's helper requests (session titles and the like) get
a built-in answer and use up no reply. -v logs one line per request.
   conversations:
     - name: main
       match: {first_user: hello}
       replies:
         - tool_use: {name: Bash, input: {command: "echo hi"}}
         - text: done
         - fault: {status: 529}

A cassette request is matched by its normalized key (model, system, tools,
messages; cache marks, billing header, dates, temp paths and the working
directory left out); an unmatched one gets a 400 naming the closest recorded
request and the first difference.`,
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "script", Usage: "script `FILE` (JSON or YAML)", EnvVars: []string{"FLOWER_MODEL_SCRIPT"}, Destination: &o.Script},
				&cli.StringFlag{Name: "cassette", Usage: "replay the cassette `FILE` (from flower model record) instead of a script", EnvVars: []string{"FLOWER_MODEL_CASSETTE"}, Destination: &o.Cassette},
				&cli.StringFlag{Name: "addr", Value: "127.0.0.1:0", Usage: "listen `ADDR` (port 0 picks a free one)", EnvVars: []string{"FLOWER_MODEL_ADDR"}, Destination: &o.Addr},
				&cli.StringFlag{Name: "record", Usage: "append every request as a JSON line to `FILE`", EnvVars: []string{"FLOWER_MODEL_RECORD"}, Destination: &o.Record},
				&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "log one line per request (conversation, reply index, model) to stderr", EnvVars: []string{"FLOWER_MODEL_VERBOSE"}, Destination: &o.Verbose},
			},
			Action: func(c *cli.Context) error {
				o.Args = c.Args().Slice()
				return e.do(o, func() error { return runModelServe(c.Context, e, o) })
			},
		}, {
			Name:  "record",
			Usage: "record a cassette: a proxy to the real Messages API",
			Description: `Forwards every request to --upstream (streams pass through as they arrive)
and appends one JSON line per Messages exchange to --out: the normalized key,
the request and the response (status, headers that matter, body or events).
Authorization and API-key headers and the values of ANTHROPIC_API_KEY,
ANTHROPIC_AUTH_TOKEN and CLAUDE_CODE_OAUTH_TOKEN are never written.

Example:
   flower model record --upstream https://api.anthropic.com --out flow.cassette --addr 127.0.0.1:8090 &
   ANTHROPIC_BASE_URL=http://127.0.0.1:8090 flower "add a --verbose flag"
   flower model serve --cassette flow.cassette --addr 127.0.0.1:8090   # replay, no key`,
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "upstream", Usage: "the Messages API base `URL` to forward to (e.g. https://api.anthropic.com), required", EnvVars: []string{"FLOWER_MODEL_UPSTREAM"}, Destination: &r.Upstream},
				&cli.StringFlag{Name: "out", Usage: "cassette `FILE` to append the exchanges to, required", EnvVars: []string{"FLOWER_MODEL_OUT"}, Destination: &r.Out},
				&cli.StringFlag{Name: "addr", Value: "127.0.0.1:0", Usage: "listen `ADDR` (port 0 picks a free one)", EnvVars: []string{"FLOWER_MODEL_ADDR"}, Destination: &r.Addr},
			},
			Action: func(c *cli.Context) error {
				r.Args = c.Args().Slice()
				return e.do(r, func() error { return runModelRecord(c.Context, e, r) })
			},
		}},
	}
}

func runModelServe(ctx context.Context, e *cmdEnv, o *modelServeOptions) error {
	if len(o.Args) > 0 {
		return usagef("model serve takes no arguments, got %q", o.Args[0])
	}
	if (o.Script == "") == (o.Cassette == "") {
		return usagef("model serve needs --script FILE or --cassette FILE (one of them)")
	}
	var opts []scripted.Option
	if p := o.Record; p != "" {
		opts = append(opts, scripted.WithRecordFile(p))
	}
	if o.Verbose {
		opts = append(opts, scripted.WithLog(e.Stderr))
	}
	var srv *scripted.Server
	var err error
	if o.Cassette != "" {
		srv, err = scripted.ServeCassette(o.Cassette, o.Addr, opts...)
	} else {
		var s *scripted.Script
		if s, err = scripted.Load(o.Script); err != nil {
			return err
		}
		srv, err = scripted.Start(s, o.Addr, opts...)
	}
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Fprintf(e.Stdout, "scripted model listening on %s\n", srv.URL())
	<-ctx.Done()
	return nil
}

func runModelRecord(ctx context.Context, e *cmdEnv, o *modelRecordOptions) error {
	if len(o.Args) > 0 {
		return usagef("model record takes no arguments, got %q", o.Args[0])
	}
	if o.Upstream == "" || o.Out == "" {
		return usagef("model record needs --upstream URL and --out FILE")
	}
	rec, err := scripted.Record(o.Upstream, o.Out, o.Addr)
	if err != nil {
		return err
	}
	defer rec.Close()
	fmt.Fprintf(e.Stdout, "recording proxy listening on %s (to %s, into %s)\n", rec.URL(), o.Upstream, o.Out)
	<-ctx.Done()
	return nil
}
