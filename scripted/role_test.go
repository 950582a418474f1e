package scripted_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/scripted"
)

// roleBody is a claude-like request with the given system prompt rules and
// messages (a JSON array).
func roleBody(system, messages string) string {
	sys, _ := json.Marshal(system)
	return `{"model":"m","system":[{"type":"text","text":"x-anthropic-billing-header: cc_version=2.1.328;"},{"type":"text","text":` + string(sys) + `}],` +
		`"tools":[{"name":"Agent"}],"messages":` + messages + `}`
}

func userText(s string) string {
	b, _ := json.Marshal(s)
	return `{"role":"user","content":` + string(b) + `}`
}

// replyText posts body and returns the reply's first text, or the whole
// answer when it is no 200.
func replyText(t *testing.T, srv *scripted.Server, body string) string {
	t.Helper()
	code, b := post(t, srv, body)
	if code != 200 {
		return b
	}
	return gjson.Get(b, "content.0.text").String()
}

// serveScript parses src (JSON or YAML) and serves it until the test ends.
func serveScript(t *testing.T, src string) *scripted.Server {
	t.Helper()
	s, err := scripted.Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := scripted.Start(s, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// TestMatchByRole: a conversation matched by role gets that role's
// requests only, the two judge tasks told apart by their first message; a
// hand_back reply waits for the Agent's hand-back while the "launched"
// result gets a built-in reply that uses up none; an unknown role is a
// script error.
func TestMatchByRole(t *testing.T) {
	srv := serveScript(t, `
conversations:
  - name: goal
    match: {role: goal}
    replies: [{text: GOAL}]
  - name: judge
    match: {role: judge}
    replies: [{text: VERDICT}]
  - name: coordinator
    match: {role: coordinator}
    replies:
      - tool_use: {id: tu1, name: Agent, input: {description: d, prompt: p, subagent_type: coder}}
      - text: HANDED-BACK
        hand_back: true
`)
	text := func(body string) string { t.Helper(); return replyText(t, srv, body) }
	const judgeRules, coordRules = "你是独立评审。你有两种任务", "你是协调者。你的职责"
	if got := text(roleBody(judgeRules, "["+userText("请独立评审这一轮工作是否达成了目标。")+"]")); got != "VERDICT" {
		t.Errorf("judge: %q", got)
	}
	if got := text(roleBody(judgeRules, "["+userText("下面是已经确认的需求。把它变成目标和检查清单。")+"]")); got != "GOAL" {
		t.Errorf("goal: %q", got)
	}
	first := userText("诉求")
	if code, b := post(t, srv, roleBody(coordRules, "["+first+"]")); code != 200 || gjson.Get(b, "content.0.name").String() != "Agent" {
		t.Fatalf("coordinator's first reply: %d %s", code, b)
	}
	agentCall := `{"role":"assistant","content":[{"type":"tool_use","id":"tu1","name":"Agent","input":{}}]}`
	launched := `{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","content":"Async agent launched successfully. agentId: a1"}]}`
	if got := text(roleBody(coordRules, "["+first+","+agentCall+","+launched+"]")); got != "子代理已经派出,等它汇报。" {
		t.Errorf("the launched result got %q", got)
	}
	// Control: a request that is neither the launch nor the hand-back does not get the hand_back reply.
	if got := text(roleBody(coordRules, "["+first+","+userText("something else")+"]")); !strings.Contains(got, `keeps reply 1 for the Agent hand-back`) {
		t.Errorf("a plain request got %q", got)
	}
	notified := userText("<task-notification><task-id>a1</task-id><result>done</result></task-notification>")
	if got := text(roleBody(coordRules, "["+first+","+agentCall+","+launched+",{\"role\":\"assistant\",\"content\":\"等\"},"+notified+"]")); got != "HANDED-BACK" {
		t.Errorf("the hand-back got %q", got)
	}
	// A foreground Agent's result is a hand-back too.
	fg := scripted.Request{Body: json.RawMessage(roleBody(coordRules, "["+first+","+agentCall+
		`,{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","content":"sub done"}]}]`))}
	if !fg.HandBack() || fg.AgentLaunched() || fg.Role() != scripted.RoleCoordinator {
		t.Errorf("foreground hand-back: %v launched %v role %q", fg.HandBack(), fg.AgentLaunched(), fg.Role())
	}
	if _, err := scripted.Parse([]byte(`{"conversations":[{"match":{"role":"re viewer"},"replies":[{"text":"x"}]}]}`)); err == nil || !strings.Contains(err.Error(), `role "re viewer" is neither one of`) {
		t.Errorf("a role that is no subagent type: %v", err)
	}
}

// TestMatchBySubagentType: role: NAME matches the requests of a subagent a
// scripted Agent call started with subagent_type NAME (its first user
// message is the call's prompt), whatever its system prompt. Controls: the
// same first message before any such call, and a subagent of another type,
// are not NAME's.
func TestMatchBySubagentType(t *testing.T) {
	srv := serveScript(t, `
conversations:
  - name: tester
    match: {role: tester}
    replies: [{text: TESTED}]
  - name: reviewer
    match: {role: reviewer}
    replies: [{text: REVIEWED}]
  - name: main
    match: {first_user: delegate}
    replies:
      - tool_use: {name: Agent, input: {description: d, prompt: REVIEW-IT, subagent_type: reviewer}}
      - tool_use: {name: Agent, input: {description: d, prompt: TEST-IT, subagent_type: tester}}
  - name: rest
    replies: [{text: NOBODY}, {text: NOBODY}]
`)
	text := func(first string) string {
		t.Helper()
		return replyText(t, srv, roleBody("You are a custom agent", "["+userText(first)+"]"))
	}
	if got := text("REVIEW-IT"); got != "NOBODY" {
		t.Errorf("control: before any Agent call REVIEW-IT got %q", got)
	}
	for range 2 {
		post(t, srv, roleBody("main", "["+userText("delegate")+"]"))
	}
	if got := text("<system-reminder>r</system-reminder>REVIEW-IT"); got != "REVIEWED" {
		t.Errorf("the reviewer subagent got %q", got)
	}
	if got := text("TEST-IT"); got != "TESTED" {
		t.Errorf("the tester subagent got %q", got)
	}
	if got := text("OTHER"); got != "NOBODY" {
		t.Errorf("control: a request no Agent call started got %q", got)
	}
	if got := text("REVIEW-IT"); !strings.Contains(got, "subagent type reviewer") || !strings.Contains(got, `conversation \"reviewer\" matched but gave all its 1 replies`) {
		t.Errorf("the 400 for a used-up subagent does not name its type: %s", got)
	}
	if r := srv.RequestsFor("reviewer"); len(r) != 1 || r[0].Agent != "reviewer" {
		t.Errorf("reviewer's requests: %+v", r)
	}
}

// TestAcrossSessions: an across_sessions conversation gives its next reply
// whichever claude session asks; a plain one starts over in each (the
// control).
func TestAcrossSessions(t *testing.T) {
	srv := serveScript(t, `
conversations:
  - name: judge
    match: {first_user: judge}
    across_sessions: true
    replies: [{text: ONE}, {text: TWO}]
  - name: plain
    match: {first_user: plain}
    replies: [{text: ONE}, {text: TWO}]
`)
	ask := func(first, session string) string {
		_, b := post(t, srv, strings.Replace(claudeLike, `"content":"hello"`, `"content":"`+first+`"`, 1), "X-Claude-Code-Session-Id", session)
		return gjson.Get(b, "content.0.text").String()
	}
	if a, b := ask("judge", "s1"), ask("judge", "s2"); a != "ONE" || b != "TWO" {
		t.Errorf("across sessions: %q, %q", a, b)
	}
	if a, b := ask("plain", "s1"), ask("plain", "s2"); a != "ONE" || b != "ONE" {
		t.Errorf("control: %q, %q", a, b)
	}
}
