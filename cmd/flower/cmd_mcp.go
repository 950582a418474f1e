package main

import (
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/flow"
)

// newMCPChannelCmd is the hidden `flower mcp-channel`: the HumanChannel's MCP
// stdio server that claude starts from --mcp-config. It relays the ask and
// inbox tools over the socket named by FLOWER_CHANNEL_SOCKET.
func newMCPChannelCmd(e *cmdEnv) *cli.Command {
	return &cli.Command{
		Name:   "mcp-channel",
		Usage:  "serve the human channel's MCP tools on stdio (started by claude)",
		Hidden: true,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("mcp-channel takes no arguments")
			}
			in := io.NopCloser(e.Stdin)
			if e.Stdin == nil {
				in = os.Stdin
			}
			return flow.ServeMCPChannel(c.Context, in, nopWriteCloser{e.Stdout}, e.Getenv(flow.ChannelSocketEnv))
		},
	}
}

// nopWriteCloser keeps the app's writer open when the MCP transport closes.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
