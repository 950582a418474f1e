package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/scripted"
)

// demoScriptYAML is the scripted model behind `flower demo`: a clarifier
// that asks one question, a judge that sets the goal and rejects the first
// round, a coordinator that first tries to write by itself (and is denied),
// then delegates, and a coder whose long command output gets spilled.
// `flower demo --print-script` prints it.
//
//go:embed demo.yaml
var demoScriptYAML string

// demoWorkspace is the placeholder the demo fills with its workspace.
const demoWorkspace = "{{workspace}}"

// demoAnswer is what the demo "types" when the clarifier asks.
const demoAnswer = "hello, flower"

// demoScript is the demo's script for workspace ws.
func demoScript(ws string) *scripted.Script {
	s, err := scripted.Parse([]byte(strings.ReplaceAll(demoScriptYAML, demoWorkspace, ws)))
	if err != nil {
		panic("flower: the embedded demo script: " + err.Error()) // TestDemoScriptParses holds it
	}
	return s
}

// demoReply is the text of the demo script's reply n in conversation name.
func demoReply(name string, n int) string {
	for _, c := range demoScript("/ws").Conversations {
		if c.Name == name {
			return c.Replies[n].Text
		}
	}
	return ""
}

// demoTool is a reply calling tool name with input (tests script with it).
func demoTool(name string, input any) scripted.Reply {
	js, _ := json.Marshal(input)
	return scripted.Reply{ToolUse: &scripted.Block{Name: name, Input: js}}
}

// typedGoal is a goal step's reply of md with the typed goal it stands for
// (flow.ParseGoal of it; tests script with it).
func typedGoal(md string) scripted.Reply {
	g := flow.ParseGoal(md)
	return scripted.GoalReply(md, g.Statement, g.Checks...)
}

// typedJudge is a judge's reply to prompt (its first user message) of md
// with the typed verdict it stands for, as a model that says the same in
// both would: flow.ParseVerdict's state, one check per item of the
// prompt's checklist (passed when achieved), its failed list and reason
// (tests script with it).
func typedJudge(prompt, md string) scripted.Reply {
	v := flow.ParseVerdict(md)
	state := v.State
	if state == "" {
		state = flow.NotYet
	}
	var checks []scripted.Check
	for _, c := range scripted.ChecklistOf(prompt) {
		checks = append(checks, scripted.Check{Check: c, Passed: state == flow.Achieved, Evidence: "scripted"})
	}
	return scripted.VerdictReply(md, state, checks, v.Failed, v.Reason)
}

// demoAnswers answers the clarifier's question, as a person would; with out
// set it shows it there (the human view shows every answer itself).
type demoAnswers struct{ out io.Writer }

func (d demoAnswers) Instant() bool { return true }

func (d demoAnswers) Answer(_ context.Context, q flow.Question) (string, bool, error) {
	if d.out == nil {
		return demoAnswer, true, nil
	}
	fmt.Fprintf(d.out, "\n[flower] the clarifier asks: %s\n  options: %s\n> %s   (typed by the demo)\n", strings.TrimSpace(q.Text), strings.Join(q.Options, " | "), demoAnswer)
	return demoAnswer, true, nil
}
