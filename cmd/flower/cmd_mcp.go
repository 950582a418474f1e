package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/flow"
)

// newMCPChannelCmd is the hidden `flower mcp-channel`: the HumanChannel's MCP
// stdio server that claude starts from --mcp-config. It relays the ask and
// inbox tools over the socket named by FLOWER_CHANNEL_SOCKET. The MCP SDK
// lives here, not in flow, so that a library user linking flow does not
// link it (and net/http, TLS, oauth2 through it).
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
			return serveMCPChannel(c.Context, in, nopWriteCloser{e.Stdout}, e.Getenv(flow.ChannelSocketEnv))
		},
	}
}

// nopWriteCloser keeps the app's writer open when the MCP transport closes.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// askArgs is the ask tool's input.
type askArgs struct {
	Question string   `json:"question" jsonschema:"要问人的问题,一次只问一个"`
	Options  []string `json:"options,omitempty" jsonschema:"可选的答案选项"`
}

// inboxArgs is the inbox tool's (empty) input.
type inboxArgs struct{}

// serveMCPChannel runs the MCP stdio server on in/out until the client goes
// away: the ask tool and the inbox tool, each call relayed as one JSON line
// over the Unix socket at socket (flow.ChannelAsk, flow.ChannelInbox).
func serveMCPChannel(ctx context.Context, in io.ReadCloser, out io.WriteCloser, socket string) error {
	s := mcp.NewServer(&mcp.Implementation{Name: "flower", Version: "0.1.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "ask",
		Description: "向人提一个问题并等待回答。一次只问一个;能给选项就给选项。没人回答时会返回超时,届时按最稳妥的理解自行决定。",
	}, func(ctx context.Context, _ *mcp.CallToolRequest, a askArgs) (*mcp.CallToolResult, any, error) {
		ans, err := flow.ChannelAsk(ctx, socket, flow.Question{Text: a.Question, Options: a.Options})
		if err != nil {
			return toolText("通道出错: "+err.Error(), true), nil, nil
		}
		return toolText("["+ans.State+"] "+ans.Text, false), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "inbox",
		Description: "查看人在运行期间留下的新消息(取走后清空)。",
	}, func(ctx context.Context, _ *mcp.CallToolRequest, _ inboxArgs) (*mcp.CallToolResult, any, error) {
		msgs, left, err := flow.ChannelInbox(ctx, socket)
		if err != nil {
			return toolText("通道不可用: "+err.Error(), true), nil, nil
		}
		if len(msgs) == 0 {
			return toolText("没有新留言。", false), nil, nil
		}
		text := strings.Join(msgs, "\n---\n")
		if left > 0 {
			text += fmt.Sprintf("\n---\n(还有 %d 条留言没取完:请马上再调用一次 inbox 工具。)", left)
		}
		return toolText(text, false), nil, nil
	})
	if err := s.Run(ctx, &mcp.IOTransport{Reader: in, Writer: out}); err != nil && ctx.Err() == nil && err != io.EOF {
		return fmt.Errorf("mcp-channel: %w", err)
	}
	return nil
}

func toolText(text string, isErr bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isErr}
}
