package flow

import (
	"context"
)

// Answer states.
const (
	Answered = "answered"
	Timeout  = "timeout"
	Refused  = "refused"
)

// Question is one thing to ask the person.
type Question struct {
	Text    string   `json:"question"`
	Options []string `json:"options,omitempty"`
	// From names who asks (a step or role), for the log.
	From string `json:"from,omitempty"`
}

// Answer is the person's reply. State is "answered", "timeout" (nobody
// answered in time, or unattended) or "refused" (the person declined, or
// max_asks is spent); Text is what goes back to the model either way.
type Answer struct {
	State string `json:"state"`
	Text  string `json:"text"`
}

// Channel is how a workflow reaches a person: the roles wire its tools and
// MCP servers into their specs, gates ask through it.
type Channel interface {
	// ToolName is the ask tool as the model sees it (mcp__flower__ask).
	ToolName() string
	// InboxToolName is the inbox tool (mcp__flower__inbox).
	InboxToolName() string
	// MCPServers is the --mcp-config "mcpServers" value that serves both tools.
	MCPServers() map[string]any
	// Ask asks the person and waits as the channel's policy says.
	Ask(ctx context.Context, q Question) (Answer, error)
	// Amend appends the person's words to the amend file under a label; it
	// reports false when they were already there.
	Amend(said, label string) (bool, error)
	// SetStep is told the name of each workflow step before it runs
	// (Workflow.Run calls it), so a message told meanwhile can say where it
	// landed.
	SetStep(name string)
}

// Answerer is where answers come from: a terminal, a file, stdin.
type Answerer interface {
	// Answer blocks until the person answers or ctx ends. ok false: nobody
	// will answer (e.g. a file of answers is used up).
	Answer(ctx context.Context, q Question) (text string, ok bool, err error)
}
