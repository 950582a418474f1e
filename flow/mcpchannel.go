package flow

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// askArgs is the ask tool's input.
type askArgs struct {
	Question string   `json:"question" jsonschema:"要问人的问题,一次只问一个"`
	Options  []string `json:"options,omitempty" jsonschema:"可选的答案选项"`
}

// inboxArgs is the inbox tool's (empty) input.
type inboxArgs struct{}

// ServeMCPChannel runs the HumanChannel's MCP stdio server on in/out until
// the client goes away: the ask tool and the inbox tool, each call relayed
// as one JSON line over the Unix socket at socket (HumanChannel's relay).
// This is what the hidden `flower mcp-channel` command runs.
func ServeMCPChannel(ctx context.Context, in io.ReadCloser, out io.WriteCloser, socket string) error {
	s := mcp.NewServer(&mcp.Implementation{Name: "flower", Version: "0.1.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "ask",
		Description: "向人提一个问题并等待回答。一次只问一个;能给选项就给选项。没人回答时会返回超时,届时按最稳妥的理解自行决定。",
	}, func(ctx context.Context, _ *mcp.CallToolRequest, a askArgs) (*mcp.CallToolResult, any, error) {
		var resp relayResponse
		if err := relay(ctx, socket, relayRequest{Op: "ask", Question: Question{Text: a.Question, Options: a.Options}}, &resp); err != nil {
			return toolText("通道不可用: "+err.Error(), true), nil, nil
		}
		if resp.Error != "" && resp.State == "" {
			return toolText("通道出错: "+resp.Error, true), nil, nil
		}
		return toolText("["+resp.State+"] "+resp.Text, false), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "inbox",
		Description: "查看人在运行期间留下的新消息(取走后清空)。",
	}, func(ctx context.Context, _ *mcp.CallToolRequest, _ inboxArgs) (*mcp.CallToolResult, any, error) {
		var resp relayResponse
		if err := relay(ctx, socket, relayRequest{Op: "inbox"}, &resp); err != nil {
			return toolText("通道不可用: "+err.Error(), true), nil, nil
		}
		if len(resp.Messages) == 0 {
			return toolText("没有新留言。", false), nil, nil
		}
		text := strings.Join(resp.Messages, "\n---\n")
		if resp.Left > 0 {
			text += fmt.Sprintf("\n---\n(还有 %d 条留言没取完:请马上再调用一次 inbox 工具。)", resp.Left)
		}
		return toolText(text, false), nil, nil
	})
	if err := s.Run(ctx, &mcp.IOTransport{Reader: in, Writer: out}); err != nil && ctx.Err() == nil && err != io.EOF {
		return fmt.Errorf("flow: mcp-channel: %w", err)
	}
	return nil
}

func toolText(text string, isErr bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isErr}
}

// relay sends one request line to the channel socket and reads one answer.
func relay(ctx context.Context, socket string, req relayRequest, resp *relayResponse) error {
	if socket == "" {
		return fmt.Errorf("%s is not set", ChannelSocketEnv)
	}
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := d.DialContext(dctx, "unix", socket)
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	b, _ := json.Marshal(req)
	if _, err := conn.Write(append(b, '\n')); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadBytes('\n')
	if err != nil {
		return err
	}
	return json.Unmarshal(line, resp)
}
