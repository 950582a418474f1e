package harness_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	flower "github.com/flowerhq/flower"
	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// hookBinary is the real flower-hook, built once per test process.
func hookBinary(t *testing.T) string {
	t.Helper()
	return testbed.BuildBinary(t, "./cmd/flower-hook")
}

// newRuntime builds a Runtime on the bed with fast retries.
func newRuntime(t *testing.T, b *testbed.Bed, mod func(*harness.Options)) *harness.Runtime {
	t.Helper()
	o := harness.NewOptions(b.Workspace)
	flower.Defaults(&o)
	o.RunDir = filepath.Join(filepath.Dir(b.Workspace), "runs")
	o.Env = b.Env()
	o.Claude = b.Claude
	o.HookPath = hookBinary(t)
	o.Resilience.BaseDelay = 50 * time.Millisecond
	o.Resilience.MaxDelay = 200 * time.Millisecond
	o.CLIRetries = 0
	if mod != nil {
		mod(&o)
	}
	rt, err := harness.New(t.Context(), o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

func readEvents(t *testing.T, path string) []harness.Event {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var evs []harness.Event
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ev harness.Event
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("events line %q: %v", l, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func kinds(evs []harness.Event) map[string]int {
	m := map[string]int{}
	for _, e := range evs {
		m[e.Kind]++
	}
	return m
}

func runCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestRun_PlainStep(t *testing.T) {
	t.Parallel()
	b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{
		{Name: "main", Replies: []scripted.Reply{{Text: "PLAIN_DONE", Usage: &scripted.Usage{InputTokens: 100, OutputTokens: 20}}}},
	}})
	rt := newRuntime(t, b, nil)
	var seen []harness.Event
	spec := harness.NewAgentSpec("plain", "You are PLAIN_ROLE.")
	res, err := rt.Run(runCtx(t), spec, "say done", harness.RunOptions{StepName: "s1", OnEvent: func(e harness.Event) { seen = append(seen, e) }})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Text != "PLAIN_DONE" || res.SessionID == "" || res.NumTurns < 1 || res.CostUSD <= 0 || res.Attempts != 1 || res.Resumed {
		t.Fatalf("result = %+v", res)
	}
	if res.Context != 100 {
		t.Errorf("context = %d, want 100 (from the main-thread assistant usage)", res.Context)
	}
	if res.EndedAt < res.StartedAt || res.StartedAt == 0 {
		t.Errorf("times: %v %v", res.StartedAt, res.EndedAt)
	}
	reqs := b.Model.Requests()
	if len(reqs) == 0 || !strings.Contains(reqs[0].System(), "You are PLAIN_ROLE.") || !strings.HasSuffix(reqs[0].FirstUser(), "say done") {
		t.Fatalf("model saw system %q first user %q", reqs[0].System(), reqs[0].FirstUser())
	}
	rows, err := harness.ReadManifest(rt.ManifestPath())
	if err != nil || len(rows) != 1 || rows[0].Run != rt.RunID() || len(rows[0].Results) != 1 || rows[0].Results[0].SessionID != res.SessionID {
		t.Fatalf("manifest = %+v, %v", rows, err)
	}
	evs := readEvents(t, rt.EventsPath())
	k := kinds(evs)
	for _, want := range []string{"step_start", "init", "assistant", "result", "step_end"} {
		if k[want] == 0 {
			t.Errorf("events.jsonl has no %q event: %v", want, k)
		}
	}
	if len(seen) != len(evs) {
		t.Errorf("OnEvent saw %d events, events.jsonl holds %d", len(seen), len(evs))
	}
	if _, err := os.Stat(filepath.Join(rt.RunDir(), rt.RunID(), "s1", "settings.json")); err != nil {
		t.Errorf("step settings.json not kept: %v", err)
	}
}

func TestRun_Faults(t *testing.T) {
	t.Parallel()
	f529 := scripted.Reply{Fault: &scripted.Fault{Status: 529, Type: "overloaded_error", Message: "Overloaded"}}
	drop := scripted.Reply{Fault: &scripted.Fault{Drop: true}}
	tests := []struct {
		name        string
		replies     []scripted.Reply
		wantOK      bool
		minAttempts int
		wantErr     string
		cliRetries  int
	}{
		{"three 529s then success", []scripted.Reply{f529, f529, f529, {Text: "AFTER_529"}}, true, 4, "", 0},
		{"three 529s, the CLI retrying once itself", []scripted.Reply{f529, f529, f529, {Text: "AFTER_529"}}, true, 2, "", 1},
		{"401 is not retried", []scripted.Reply{{Fault: &scripted.Fault{Status: 401, Type: "authentication_error", Message: "invalid x-api-key"}}, {Text: "NEVER"}}, false, 1, "401", 0},
		{"connection drop mid-stream", []scripted.Reply{drop, drop, {Text: "AFTER_DROP"}}, true, 2, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main", Replies: tc.replies}}})
			rt := newRuntime(t, b, func(o *harness.Options) { o.CLIRetries = tc.cliRetries })
			res, err := rt.Run(runCtx(t), harness.NewAgentSpec("plain", "x"), "go on", harness.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("result: ok=%v attempts=%d resumed=%v errors=%q", res.OK, res.Attempts, res.Resumed, res.Errors)
			if res.OK != tc.wantOK {
				t.Fatalf("ok = %v, want %v: %+v", res.OK, tc.wantOK, res)
			}
			if tc.wantOK {
				if res.Attempts < tc.minAttempts || !res.Resumed || res.SessionID == "" {
					t.Fatalf("want attempts ≥ %d, resumed, a session: %+v", tc.minAttempts, res)
				}
				// Every request after the first failure belongs to the same session.
				sessions := map[string]bool{}
				for _, r := range b.Model.Requests() {
					if id := sessionOf(r); id != "" {
						sessions[id] = true
					}
				}
				if len(sessions) > 1 {
					t.Errorf("requests came from %d sessions, want 1: %v", len(sessions), sessions)
				}
				last := b.Model.Requests()[len(b.Model.Requests())-1]
				if !strings.Contains(lastUserText(last), harness.DefaultResumePrompt) {
					t.Errorf("the resumed request does not carry the resume prompt")
				}
				evs := readEvents(t, rt.EventsPath())
				if kinds(evs)["retry"] < 1 {
					t.Errorf("no retry event: %v", kinds(evs))
				}
				return
			}
			if res.Attempts != tc.minAttempts || !strings.Contains(res.Error, tc.wantErr) {
				t.Fatalf("want attempts %d and an error with %q: %+v", tc.minAttempts, tc.wantErr, res)
			}
			if n := len(b.Model.Requests()); n != 1 {
				t.Errorf("the model got %d requests, want 1 (no retry)", n)
			}
		})
	}
}

// sessionOf reads the session id the CLI puts into request metadata.
func sessionOf(r scripted.Request) string {
	var body struct {
		Metadata struct {
			UserID string `json:"user_id"`
		} `json:"metadata"`
	}
	json.Unmarshal(r.Body, &body)
	if i := strings.Index(body.Metadata.UserID, "session_"); i >= 0 {
		return body.Metadata.UserID[i:]
	}
	return body.Metadata.UserID
}

func TestRun_ResumeFromStore(t *testing.T) {
	t.Parallel()
	b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main", Replies: []scripted.Reply{
		{Text: "FIRST_ANSWER"}, {Text: "SECOND_ANSWER"},
	}}}})
	rt := newRuntime(t, b, nil)
	spec := harness.NewAgentSpec("plain", "x")
	r1, err := rt.Run(runCtx(t), spec, "REMEMBER_ME_42", harness.RunOptions{StepName: "one"})
	if err != nil || !r1.OK {
		t.Fatalf("step one: %+v %v", r1, err)
	}
	// Lose the CLI's own transcript files: only sessions.db remains.
	if err := os.RemoveAll(filepath.Join(rt.RunDir(), "claude-config", "projects")); err != nil {
		t.Fatal(err)
	}
	r2, err := rt.Run(runCtx(t), spec, "what did I say?", harness.RunOptions{StepName: "two", Resume: r1.SessionID})
	if err != nil || !r2.OK || r2.Text != "SECOND_ANSWER" || r2.SessionID != r1.SessionID {
		t.Fatalf("step two: %+v %v", r2, err)
	}
	reqs := b.Model.Requests()
	last := reqs[len(reqs)-1]
	if !strings.Contains(last.Messages().Raw, "REMEMBER_ME_42") || !strings.Contains(last.Messages().Raw, "FIRST_ANSWER") {
		t.Fatalf("the resumed request lacks step one's history: %s", last.Messages().Raw)
	}
	for _, e := range readEvents(t, rt.EventsPath()) {
		if e.Kind == "store" {
			t.Errorf("store event: %v", e.Data)
		}
	}
}

func TestRun_GuardReportsAndWorkbench(t *testing.T) {
	t.Parallel()
	rt, reqs := judgeTriesBash(t, func(b *testbed.Bed, o *harness.Options) { o.Workbench = harness.RunDirWorkbench(b.Workspace, o.RunDir) })
	firstLine := func(s string) string { return strings.SplitN(s, "\n", 2)[0] }
	heading, title := firstLine(rt.Workbench().PromptBlock()), firstLine(rt.Workbench().Index())
	if !strings.Contains(heading, rt.Workbench().Root()) || !strings.Contains(reqs[0].System(), heading) || !strings.Contains(reqs[0].System(), title) {
		t.Errorf("workbench block not in the system prompt")
	}
	if kinds(readEvents(t, rt.EventsPath()))["guard"] == 0 {
		t.Errorf("events.jsonl lacks the guard report")
	}
}

// judgeTriesBash runs a judge step whose model calls Bash once, on a
// runtime that opts changes, and checks that the whitelist guard denied it
// (the model saw the denial) and reported the deny over the socket. It
// returns the runtime and the model's requests.
func judgeTriesBash(t *testing.T, opts func(*testbed.Bed, *harness.Options)) (*harness.Runtime, []scripted.Request) {
	t.Helper()
	bash := &scripted.Block{Name: "Bash", Input: json.RawMessage(`{"command":"echo guarded","description":"try bash"}`)}
	b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main", Replies: []scripted.Reply{
		{ToolUse: bash}, {Text: "GAVE_UP"},
	}}}})
	r := newRuntime(t, b, func(o *harness.Options) { opts(b, o) })
	var guards []harness.Event
	var mu sync.Mutex
	res, err := r.Run(runCtx(t), harness.NewAgentSpec("judge", "x"), "check it", harness.RunOptions{OnEvent: func(e harness.Event) {
		if e.Kind == "guard" {
			mu.Lock()
			guards = append(guards, e)
			mu.Unlock()
		}
	}})
	if err != nil || !res.OK {
		t.Fatalf("%+v %v", res, err)
	}
	reqs := b.Model.Requests()
	if tr := reqs[len(reqs)-1].ToolResults(); len(tr) != 1 || !tr[0].IsError || !strings.Contains(tr[0].Content, "judge") {
		t.Fatalf("the whitelist guard did not deny Bash for the judge: %+v", tr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(guards) == 0 || guards[0].Data["decision"] != "deny" || guards[0].Data["guard"] != "whitelist" || guards[0].Step != "judge" {
		t.Fatalf("no whitelist deny report over the socket: %+v", guards)
	}
	return r, reqs
}
