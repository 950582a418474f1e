package flowerbin

import (
	"encoding/json"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/internal/demo"
	"github.com/flowerhq/flower/scripted"
)

// DemoScript is `flower demo`'s script (internal/demo) for workspace ws.
func DemoScript(ws string) *scripted.Script {
	s, err := scripted.Parse([]byte(demo.For(ws)))
	if err != nil {
		panic("flowerbin: the demo script: " + err.Error())
	}
	return s
}

// DemoReply is the text of the demo script's reply n in conversation name.
func DemoReply(name string, n int) string {
	for _, c := range DemoScript("/ws").Conversations {
		if c.Name == name {
			return c.Replies[n].Text
		}
	}
	return ""
}

// The demo's documents, as its script "writes" them.
var (
	DemoBrief    = DemoReply("clarify", 1)
	DemoGoal     = DemoReply("goal", 0)
	DemoAchieved = DemoReply("judge", 1)
)

// Tool is a reply calling tool name with input.
func Tool(name string, input any) scripted.Reply {
	js, _ := json.Marshal(input)
	return scripted.Reply{ToolUse: &scripted.Block{Name: name, Input: js}}
}

// TypedGoal is a goal step's reply of md with the typed goal it stands for
// (flow.ParseGoal of it).
func TypedGoal(md string) scripted.Reply {
	g := flow.ParseGoal(md)
	return scripted.GoalReply(md, g.Statement, g.Checks...)
}

// TypedJudge is a judge's reply to prompt (its first user message) of md
// with the typed verdict it stands for, as a model that says the same in
// both would: flow.ParseVerdict's state, one check per item of the
// prompt's checklist (passed when achieved), its failed list and reason.
func TypedJudge(prompt, md string) scripted.Reply {
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

// PollingScript is a flow whose clarifier writes the demo's brief and whose
// coordinator polls its inbox (every 100 ms) until finish returns a text
// for the request it got, which ends the step.
func PollingScript(finish func(scripted.Request) string) *scripted.Script {
	return &scripted.Script{Conversations: []scripted.Conversation{
		{Name: "clarify", Match: scripted.Match{System: "你是需求澄清者"}, Func: func(scripted.Request) scripted.Reply {
			return scripted.Reply{Text: DemoBrief}
		}},
		{Name: "coordinator", Match: scripted.Match{System: "你是协调者"}, Func: func(r scripted.Request) scripted.Reply {
			if text := finish(r); text != "" {
				return scripted.Reply{Text: text}
			}
			poll := Tool("mcp__flower__inbox", map[string]any{})
			poll.DelayMS = 100
			return poll
		}},
	}}
}
