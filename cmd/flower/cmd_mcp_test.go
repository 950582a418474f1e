package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flowerhq/flower/flow"
)

func mustAnswers(t *testing.T, lines ...string) *flow.FileAnswers {
	t.Helper()
	fa, err := flow.NewFileAnswers(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return fa
}

// The MCP server relays ask and inbox over the socket to the channel.
func TestMCPChannelRelay(t *testing.T) {
	h := flow.NewHumanChannel(filepath.Join(t.TempDir(), "log.md"), "", mustAnswers(t, "2"))
	h.Timeout = flow.NoWait
	h.Command = []string{"/bin/flower", "mcp-channel"}
	if err := h.Open("", "", ""); err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	cfg := h.MCPServers()["flower"].(map[string]any)
	sock := cfg["env"].(map[string]string)[flow.ChannelSocketEnv]
	if cfg["command"] != "/bin/flower" || sock == "" || h.ToolName() != "mcp__flower__ask" || h.InboxToolName() != "mcp__flower__inbox" {
		t.Fatalf("config = %v", cfg)
	}
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- serveMCPChannel(ctx, sr, sw, sock) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil)
	sess, err := client.Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	tools, err := sess.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 2 {
		t.Fatalf("tools = %+v, %v", tools, err)
	}
	resultText := func(r *mcp.CallToolResult) string { return r.Content[0].(*mcp.TextContent).Text }
	r, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"question": "选哪个?", "options": []string{"A", "B"}}})
	if err != nil || r.IsError || resultText(r) != "[answered] 2" {
		t.Fatalf("ask = %+v, %v", r, err)
	}
	r, _ = sess.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"question": "还有吗?"}})
	if !strings.HasPrefix(resultText(r), "[timeout] ") {
		t.Errorf("second ask = %q", resultText(r))
	}
	r, _ = sess.CallTool(ctx, &mcp.CallToolParams{Name: "inbox", Arguments: map[string]any{}})
	if resultText(r) != "没有新留言。" {
		t.Errorf("empty inbox = %q", resultText(r))
	}
	h.Post("记得写测试")
	r, _ = sess.CallTool(ctx, &mcp.CallToolParams{Name: "inbox", Arguments: map[string]any{}})
	if resultText(r) != "记得写测试" {
		t.Errorf("inbox = %q", resultText(r))
	}
	if h.Asks() != 2 {
		t.Errorf("asks = %d", h.Asks())
	}
	sess.Close()
	cancel()
	<-done
	h.Close()
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Error("Close left the socket behind")
	}
}

func TestMCPChannelNoSocket(t *testing.T) {
	if _, err := flow.ChannelAsk(t.Context(), "", flow.Question{Text: "?"}); err == nil || !strings.Contains(err.Error(), flow.ChannelSocketEnv) {
		t.Errorf("err = %v", err)
	}
}
