package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/internal/demo"
	"github.com/flowerhq/flower/scripted"
)

// demoScript is the demo's script (internal/demo) for workspace ws.
func demoScript(ws string) *scripted.Script {
	s, err := scripted.Parse([]byte(demo.For(ws)))
	if err != nil {
		panic("flower: the embedded demo script: " + err.Error()) // TestDemoScriptParses holds it
	}
	return s
}

// demoAnswers answers the clarifier's question, as a person would; with out
// set it shows it there (the human view shows every answer itself).
type demoAnswers struct{ out io.Writer }

func (d demoAnswers) Instant() bool { return true }

func (d demoAnswers) Answer(_ context.Context, q flow.Question) (string, bool, error) {
	if d.out == nil {
		return demo.Answer, true, nil
	}
	fmt.Fprintf(d.out, "\n[flower] the clarifier asks: %s\n  options: %s\n> %s   (typed by the demo)\n", strings.TrimSpace(q.Text), strings.Join(q.Options, " | "), demo.Answer)
	return demo.Answer, true, nil
}
