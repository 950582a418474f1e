package scripted_test

import (
	"strings"
	"testing"

	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

func mustParse(t *testing.T, js string) *scripted.Script {
	t.Helper()
	s, err := scripted.Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// (a) a plain text reply and the result line it produces.
func TestE2E_PlainText(t *testing.T) {
	t.Parallel()
	bed := testbed.New(t, mustParse(t, `{"conversations":[
	  {"name":"main","match":{"first_user":"say hello"},"replies":[{"text":"hello from the script","usage":{"input_tokens":12,"output_tokens":7}}]}]}`))
	run := bed.Print(t, "say hello")
	if run.ExitCode != 0 {
		t.Fatalf("exit %d; stderr %s; stdout %s", run.ExitCode, run.Stderr, run.Stdout)
	}
	res := run.Result
	if got := res.Get("result").String(); got != "hello from the script" {
		t.Errorf("result = %q", got)
	}
	if res.Get("is_error").Bool() || res.Get("subtype").String() != "success" {
		t.Errorf("result line: %s", res.Raw)
	}
	if res.Get("session_id").String() == "" || res.Get("num_turns").Int() != 1 {
		t.Errorf("result line lacks session or turns: %s", res.Raw)
	}
	reqs := bed.Model.RequestsFor("main")
	if len(reqs) != 1 {
		t.Fatalf("main got %d requests, want 1; all: %d", len(reqs), len(bed.Model.Requests()))
	}
	if !strings.Contains(reqs[0].FirstUser(), "say hello") || !reqs[0].Stream() {
		t.Errorf("request: first user %q stream %v", reqs[0].FirstUser(), reqs[0].Stream())
	}
	if len(reqs[0].Tools()) == 0 || reqs[0].System() == "" {
		t.Errorf("request had no tools or no system text")
	}
}

// (b) a Bash round trip: the second request carries the tool_result.
func TestE2E_BashRoundTrip(t *testing.T) {
	t.Parallel()
	bed := testbed.New(t, mustParse(t, `{"conversations":[
	  {"name":"main","match":{"first_user":"run echo"},"replies":[
	    {"tool_use":{"name":"Bash","input":{"command":"echo scripted-bash-ok","description":"echo"}}},
	    {"text":"done"}]}]}`))
	run := bed.Print(t, "run echo")
	if run.ExitCode != 0 || run.Result.Get("result").String() != "done" {
		t.Fatalf("exit %d result %s stderr %s", run.ExitCode, run.Result.Raw, run.Stderr)
	}
	reqs := bed.Model.RequestsFor("main")
	if len(reqs) != 2 {
		t.Fatalf("got %d requests", len(reqs))
	}
	trs := reqs[1].ToolResults()
	if len(trs) != 1 || trs[0].IsError || strings.TrimSpace(trs[0].Content) != "scripted-bash-ok" {
		t.Fatalf("tool results in 2nd request: %+v", trs)
	}
}

// (c) an Agent call whose subagent conversation is routed to its own entry.
func TestE2E_AgentRoutedToItsOwnConversation(t *testing.T) {
	t.Parallel()
	bed := testbed.New(t, mustParse(t, `{"conversations":[
	  {"name":"sub","match":{"first_user":"SUBTASK: write the word"},"replies":[
	    {"tool_use":{"name":"Bash","input":{"command":"echo from-sub","description":"echo"}}},
	    {"text":"sub finished"}]},
	  {"name":"main","match":{"first_user":"delegate it"},"replies":[
	    {"tool_use":{"name":"Agent","input":{"description":"do it","prompt":"SUBTASK: write the word","subagent_type":"worker","run_in_background":false}}},
	    {"text":"main finished"}]}]}`))
	agents := `{"worker":{"description":"does work","prompt":"You are WORKER_SYS","tools":["Bash","Read"]}}`
	run := bed.Print(t, "delegate it", "--agents", agents)
	if run.ExitCode != 0 || run.Result.Get("result").String() != "main finished" {
		t.Fatalf("exit %d result %s stderr %s", run.ExitCode, run.Result.Raw, run.Stderr)
	}
	sub := bed.Model.RequestsFor("sub")
	if len(sub) != 2 {
		t.Fatalf("subagent got %d requests", len(sub))
	}
	if !strings.Contains(sub[0].System(), "WORKER_SYS") {
		t.Errorf("subagent system prompt lacks its role text: %.200q", sub[0].System())
	}
	if got := sub[0].Tools(); strings.Join(got, ",") != "Bash,Read" {
		t.Errorf("subagent tools = %v", got)
	}
	if trs := sub[1].ToolResults(); len(trs) != 1 || !strings.Contains(trs[0].Content, "from-sub") {
		t.Errorf("subagent tool result: %+v", trs)
	}
	main := bed.Model.RequestsFor("main")
	if len(main) != 2 || !strings.Contains(main[1].Text(), "sub finished") {
		t.Errorf("main's 2nd request does not carry the hand-back")
	}
}

// (d) a 529 that the CLI retries.
func TestE2E_OverloadedIsRetried(t *testing.T) {
	t.Parallel()
	bed := testbed.New(t, mustParse(t, `{"conversations":[
	  {"name":"main","match":{"first_user":"retry me"},"replies":[{"fault":{"status":529}},{"text":"after retry"}]}]}`))
	run := bed.Print(t, "retry me")
	if run.ExitCode != 0 || run.Result.Get("result").String() != "after retry" {
		t.Fatalf("exit %d result %s", run.ExitCode, run.Result.Raw)
	}
	if n := len(run.OfType("system", "api_retry")); n != 1 {
		t.Errorf("api_retry lines = %d, want 1", n)
	}
	reqs := bed.Model.RequestsFor("main")
	if len(reqs) != 2 || reqs[0].Status != 529 || reqs[1].Status != 200 {
		t.Errorf("requests: %+v", reqs)
	}
}

// (e) a "prompt is too long" 400 and the result fields it yields.
func TestE2E_PromptTooLong(t *testing.T) {
	t.Parallel()
	bed := testbed.New(t, mustParse(t, `{"conversations":[
	  {"name":"main","match":{"first_user":"too long"},"replies":[{"fault":{"status":400,"message":"prompt is too long: 250000 tokens > 200000 maximum"}}]}]}`))
	run := bed.Print(t, "too long")
	res := run.Result
	if run.ExitCode != 1 || !res.Get("is_error").Bool() ||
		res.Get("api_error_status").Int() != 400 || res.Get("terminal_reason").String() != "prompt_too_long" {
		t.Fatalf("exit %d result %s", run.ExitCode, res.Raw)
	}
	if len(bed.Model.RequestsFor("main")) != 1 {
		t.Errorf("prompt-too-long was retried")
	}
}

// A connection dropped mid-stream reaches the CLI as a failure it retries.
func TestE2E_DropMidStream(t *testing.T) {
	t.Parallel()
	bed := testbed.New(t, mustParse(t, `{"conversations":[
	  {"name":"main","match":{"first_user":"drop me"},"replies":[{"fault":{"drop":true}},{"text":"recovered"}]}]}`))
	run := bed.Print(t, "drop me")
	if run.Result.Get("result").String() != "recovered" {
		t.Fatalf("exit %d result %s", run.ExitCode, run.Result.Raw)
	}
	if len(bed.Model.RequestsFor("main")) != 2 {
		t.Errorf("requests = %d", len(bed.Model.RequestsFor("main")))
	}
}

// Unmatched requests get an error naming what arrived.
func TestE2E_UnmatchedNamesTheRequest(t *testing.T) {
	t.Parallel()
	bed := testbed.New(t, mustParse(t, `{"conversations":[{"name":"other","match":{"first_user":"nothing like it"},"replies":[{"text":"x"}]}]}`))
	run := bed.Print(t, "an unscripted prompt")
	if !run.Result.Get("is_error").Bool() || !strings.Contains(run.Result.Get("result").String(), "no script entry matches") {
		t.Fatalf("result %s", run.Result.Raw)
	}
	if res := run.Result.Get("result").String(); len(bed.Model.Unmatched()) == 0 || !strings.Contains(res, `first user message "an unscripted prompt"`) ||
		!strings.Contains(res, "role none of clarify") {
		t.Errorf("unmatched not recorded or not named: %s", run.Result.Get("result"))
	}
}

// TestE2E_SubagentTypeRole: on the real CLI, role: NAME routes each
// subagent to the conversation of its type — two custom types whose
// system prompts share no flower marker. The control is the order: the
// tester conversation is tried first, and the reviewer's requests still do
// not go to it.
func TestE2E_SubagentTypeRole(t *testing.T) {
	t.Parallel()
	bed := testbed.New(t, mustParse(t, `{"conversations":[
	  {"name":"tester","match":{"role":"tester"},"replies":[{"text":"tester finished"}]},
	  {"name":"reviewer","match":{"role":"reviewer"},"replies":[{"text":"reviewer finished"}]},
	  {"name":"main","match":{"first_user":"delegate both"},"replies":[
	    {"tool_use":{"name":"Agent","input":{"description":"review","prompt":"REVIEW the draft","subagent_type":"reviewer","run_in_background":false}}},
	    {"tool_use":{"name":"Agent","input":{"description":"test","prompt":"TEST the draft","subagent_type":"tester","run_in_background":false}}},
	    {"text":"main finished"}]}]}`))
	agents := `{"reviewer":{"description":"reviews","prompt":"You are REVIEWER_SYS","tools":["Read"]},"tester":{"description":"tests","prompt":"You are TESTER_SYS","tools":["Read"]}}`
	run := bed.Print(t, "delegate both", "--agents", agents)
	if run.ExitCode != 0 || run.Result.Get("result").String() != "main finished" {
		t.Fatalf("exit %d result %s stderr %s", run.ExitCode, run.Result.Raw, run.Stderr)
	}
	for typ, sys := range map[string]string{"reviewer": "REVIEWER_SYS", "tester": "TESTER_SYS"} {
		reqs := bed.Model.RequestsFor(typ)
		if len(reqs) != 1 || !strings.Contains(reqs[0].System(), sys) || reqs[0].Agent != typ {
			t.Errorf("%s: %d requests (want 1 with %s in its system prompt)", typ, len(reqs), sys)
		}
	}
	if u := bed.Model.Unmatched(); len(u) != 0 {
		t.Errorf("%d unmatched requests: %s", len(u), u[0].Error)
	}
}
