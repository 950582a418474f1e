package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/internal/testbed"
	"github.com/flowerhq/flower/scripted"
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
	}{
		{"three 529s then success", []scripted.Reply{f529, f529, f529, {Text: "AFTER_529"}}, true, 2, ""},
		{"401 is not retried", []scripted.Reply{{Fault: &scripted.Fault{Status: 401, Type: "authentication_error", Message: "invalid x-api-key"}}, {Text: "NEVER"}}, false, 1, "401"},
		{"connection drop mid-stream", []scripted.Reply{drop, drop, {Text: "AFTER_DROP"}}, true, 2, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main", Replies: tc.replies}}})
			rt := newRuntime(t, b, nil)
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
				if !strings.Contains(last.Messages().Raw, "infrastructure error") {
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

// lastUserText is the text of the last user message of a request.
func lastUserText(r scripted.Request) string {
	msgs := r.Messages().Array()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Get("role").String() != "user" {
			continue
		}
		c := msgs[i].Get("content")
		if c.Type == gjson.String {
			return c.String()
		}
		var sb strings.Builder
		for _, b := range c.Array() {
			sb.WriteString(b.Get("text").String())
		}
		return sb.String()
	}
	return ""
}

const handoffDoc = `## 在做什么
Counting the widgets in HANDOFF_TASK.

## 已定结论
The widgets live in widgets.txt.

## 走不通的路
grep over the whole disk was too slow.

## 下一步
NEXT_MARKER: count the lines of widgets.txt.

## 现场
widgets.txt is half read.`

// handoffScript: the main session crosses the handoff level on its first
// reply (a harmless echo), writes the handoff when asked, and the successor
// (routed by its prompt block) either finishes or, with fullAgain, fills up
// once more.
func handoffScript(fullAgain bool) *scripted.Script {
	big := &scripted.Usage{InputTokens: 60_000, OutputTokens: 10}
	echo := &scripted.Block{Name: "Bash", Input: json.RawMessage(`{"command":"echo hi","description":"say hi"}`)}
	writer := func(r scripted.Request) scripted.Reply {
		if strings.Contains(lastUserText(r), "## 下一步") {
			return scripted.Reply{Text: handoffDoc, Usage: &scripted.Usage{InputTokens: 61_000, OutputTokens: 100}}
		}
		return scripted.Reply{Text: "MAIN_CONTINUES", Usage: big}
	}
	successor := scripted.Conversation{Name: "successor", Match: scripted.Match{FirstUser: "You continue step"},
		Replies: []scripted.Reply{{Text: "SUCCESSOR_DONE", Usage: &scripted.Usage{InputTokens: 2_000, OutputTokens: 10}}}}
	if fullAgain {
		successor.Replies = []scripted.Reply{{ToolUse: echo, Usage: big}}
		successor.Func = writer
	}
	return &scripted.Script{Conversations: []scripted.Conversation{
		successor,
		{Name: "main", Replies: []scripted.Reply{{ToolUse: echo, Usage: big}}, Func: writer},
	}}
}

func TestRun_Handoff(t *testing.T) {
	t.Parallel()
	b := testbed.New(t, handoffScript(false))
	rt := newRuntime(t, b, func(o *harness.Options) {
		o.Handoff = harness.HandoffPolicy{Enabled: true, Window: 100_000, Headroom: 50_000, MaxGenerations: 2}
		o.Workbench = harness.RunDirWorkbench(b.Workspace, o.RunDir)
	})
	spec := harness.NewAgentSpec("worker", "x")
	spec.AllowedTools = []string{"Bash", "Read"}
	spec.MaxBudgetUSD = 5
	res, err := rt.Run(runCtx(t), spec, "HANDOFF_TASK: count the widgets", harness.RunOptions{StepName: "count"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Text != "SUCCESSOR_DONE" || len(res.Retired) != 1 || res.Retired[0] == res.SessionID || res.SessionID == "" {
		t.Fatalf("result = %+v", res)
	}
	doc := filepath.Join(rt.Workbench().Notes(), "交接-count.md")
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## 在做什么", "Counting the widgets", "## 下一步", "NEXT_MARKER", "## 走不通的路", "## 现场", "## 已定结论"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("handoff document lacks %q:\n%s", want, data)
		}
	}
	var succ []scripted.Request
	for _, r := range b.Model.Requests() {
		if r.Conversation == "successor" {
			succ = append(succ, r)
		}
	}
	if len(succ) == 0 || !strings.Contains(succ[0].FirstUser(), "NEXT_MARKER") || !strings.Contains(succ[0].FirstUser(), doc) {
		t.Fatalf("the successor's first prompt is not the handoff's prompt block: %v", succ)
	}
	if strings.Contains(succ[0].Messages().Raw, "HANDOFF_TASK: count") {
		t.Errorf("the successor session carries the old history")
	}
	var phases []string
	for _, e := range readEvents(t, rt.EventsPath()) {
		if e.Kind == "handoff" {
			phases = append(phases, e.Data["phase"].(string))
			if e.Data["phase"] == "done" && (e.Data["degraded"] != false || e.Data["path"] != doc) {
				t.Errorf("done event = %v", e.Data)
			}
		}
	}
	if strings.Join(phases, ",") != "near,writing,done" {
		t.Errorf("handoff phases = %v, want near,writing,done", phases)
	}
}

func TestRun_HandoffMaxGenerations(t *testing.T) {
	t.Parallel()
	b := testbed.New(t, handoffScript(true))
	rt := newRuntime(t, b, func(o *harness.Options) {
		o.Handoff = harness.HandoffPolicy{Enabled: true, Window: 100_000, Headroom: 50_000, MaxGenerations: 1}
		o.Workbench = harness.RunDirWorkbench(b.Workspace, o.RunDir)
	})
	spec := harness.NewAgentSpec("worker", "x")
	spec.AllowedTools = []string{"Bash", "Read"}
	res, err := rt.Run(runCtx(t), spec, "HANDOFF_TASK: count the widgets", harness.RunOptions{StepName: "count"})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || len(res.Retired) != 1 || !strings.Contains(res.Error, "max_generations=1") {
		t.Fatalf("want the max_generations diagnostic: %+v", res)
	}
	if n := len(harness.ArchivedHandoffs(rt.Workbench().Notes())); n != 0 {
		t.Errorf("%d archived handoffs, want 0 (only one was written)", n)
	}
}

func TestRun_Interrupt(t *testing.T) {
	t.Parallel()
	b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main",
		Func: func(r scripted.Request) scripted.Reply {
			if strings.Contains(lastUserText(r), "STOP_WORDS") {
				return scripted.Reply{Text: "AFTER_INTERRUPT"}
			}
			return scripted.Reply{Text: "TOO_SLOW", DelayMS: 20_000}
		}}}})
	rt := newRuntime(t, b, nil)
	var once sync.Once
	onEvent := func(e harness.Event) {
		if e.Kind == "init" {
			once.Do(func() {
				go func() {
					time.Sleep(500 * time.Millisecond)
					if n := rt.Interrupt("STOP_WORDS: use the blue one"); n != 1 {
						t.Errorf("Interrupt reached %d steps, want 1", n)
					}
				}()
			})
		}
	}
	start := time.Now()
	res, err := rt.Run(runCtx(t), harness.NewAgentSpec("plain", "x"), "pick a colour", harness.RunOptions{OnEvent: onEvent})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Text != "AFTER_INTERRUPT" || res.Attempts != 1 || len(res.Errors) != 1 || res.Errors[0] != harness.Interrupted {
		t.Fatalf("result = %+v", res)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("took %s: the interrupt did not cut the slow reply", d)
	}
	reqs := b.Model.Requests()
	last := reqs[len(reqs)-1]
	if !strings.Contains(lastUserText(last), "STOP_WORDS: use the blue one") || !strings.Contains(lastUserText(last), harness.InterruptNote) {
		t.Fatalf("the resumed request's last user message = %q", lastUserText(last))
	}
	if !strings.Contains(last.Messages().Raw, "pick a colour") {
		t.Errorf("the resumed request is not the same session (original prompt missing)")
	}
	if sessionOf(reqs[0]) != sessionOf(last) {
		t.Errorf("sessions differ: %s vs %s", sessionOf(reqs[0]), sessionOf(last))
	}
}

// fakeClaude writes a shell script that stands in for claude.
func fakeClaude(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// bareOptions are Options that need no scripted model.
func bareOptions(t *testing.T) harness.Options {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	os.MkdirAll(ws, 0o755)
	o := harness.NewOptions(ws)
	o.RunDir = filepath.Join(root, "runs")
	o.Env = []string{"HOME=" + filepath.Join(root, "home"), "PATH=" + os.Getenv("PATH"), "ANTHROPIC_API_KEY=sk-test", "ANTHROPIC_BASE_URL=http://127.0.0.1:1"}
	o.HookPath = hookBinary(t)
	o.Resilience.BaseDelay = 10 * time.Millisecond
	return o
}

// groupGone waits up to 3s for every live (non-zombie) member of the
// process group pgid to disappear.
func groupGone(pgid int) bool {
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if syscall.Kill(-pgid, 0) == syscall.ESRCH || len(liveMembers(pgid)) == 0 {
			return true
		}
	}
	return false
}

// liveMembers lists the non-zombie processes of group pgid from /proc.
func liveMembers(pgid int) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state ppid pgrp ...
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" {
			out = append(out, e.Name()+":"+s[:i+1])
		}
	}
	return out
}

func TestRun_BrokenChild(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		script  string
		wantErr string
	}{
		{"dies before init", `echo $$ > "$PIDFILE"; sleep 300 & echo "boom: no config" >&2; exit 3`, "exited before system/init (exit 3): boom: no config"},
		{"garbage on stdout", `echo $$ > "$PIDFILE"; sleep 300 & echo "Welcome to claude! this is not json"; sleep 300`, "not stream-json"},
		{"silent hang", `echo $$ > "$PIDFILE"; sleep 300`, "no system/init from claude within 1s"},
		{"killed by a signal after init", `echo $$ > "$PIDFILE"; echo '{"type":"system","subtype":"init","session_id":"s-1"}'; sleep 300 & kill -9 $$`, "exited without a result (killed by signal killed)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := bareOptions(t)
			pidfile := filepath.Join(t.TempDir(), "pid")
			o.Env = append(o.Env, "PIDFILE="+pidfile)
			o.Claude = fakeClaude(t, tc.script)
			o.StartTimeout = time.Second
			o.Resilience.MaxAttempts = 1
			rt, err := harness.New(t.Context(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			start := time.Now()
			res, err := rt.Run(runCtx(t), harness.NewAgentSpec("plain", "x"), "hi", harness.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.OK || !strings.Contains(res.Error, tc.wantErr) {
				t.Fatalf("error = %q, want it to contain %q", res.Error, tc.wantErr)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %s", d)
			}
			data, err := os.ReadFile(pidfile)
			if err != nil {
				t.Fatal(err)
			}
			pgid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
			if pgid <= 1 || !groupGone(pgid) {
				t.Errorf("process group %d is still alive", pgid)
			}
		})
	}
}

func TestNew_Preconditions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		mod     func(o *harness.Options)
		wantErr error
		wantMsg string
	}{
		{"missing claude", func(o *harness.Options) { o.Claude = "/nonexistent/claude" }, harness.ErrClaudeNotFound, "/nonexistent/claude"},
		{"missing credentials", func(o *harness.Options) { o.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")} }, harness.ErrNoCredentials, "ANTHROPIC_API_KEY"},
		{"credentials from .env", func(o *harness.Options) {
			o.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
			os.WriteFile(filepath.Join(o.Workspace, ".env"), []byte("ANTHROPIC_API_KEY=sk-from-dotenv\n"), 0o600)
		}, nil, ""},
		{"logged-in config dir", func(o *harness.Options) {
			home := t.TempDir()
			os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
			os.WriteFile(filepath.Join(home, ".claude", ".credentials.json"), []byte(`{"claudeAiOauth":{"accessToken":"a","refreshToken":"SECRET_REFRESH"}}`), 0o600)
			o.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
		}, nil, ""},
		{"bedrock switch", func(o *harness.Options) {
			o.Env = []string{"HOME=" + t.TempDir(), "CLAUDE_CODE_USE_BEDROCK=1"}
		}, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := bareOptions(t)
			o.Claude = fakeClaude(t, "exit 0")
			tc.mod(&o)
			rt, err := harness.New(t.Context(), o)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				defer rt.Close()
				// Portable mode copies a login without its refresh token.
				if data, err := os.ReadFile(filepath.Join(rt.RunDir(), "claude-config", ".credentials.json")); err == nil && strings.Contains(string(data), "SECRET_REFRESH") {
					t.Errorf("refresh token copied into the run's config dir: %s", data)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("New error = %v, want %v mentioning %q", err, tc.wantErr, tc.wantMsg)
			}
		})
	}
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

// flowerStep runs the built flower binary's step command in the bed.
func flowerStep(ctx context.Context, b *testbed.Bed, flower, hook, runDir string, args ...string) *exec.Cmd {
	full := append([]string{"step", "-C", b.Workspace, "--run-dir", runDir, "--claude", b.Claude, "--hook", hook}, args...)
	cmd := exec.CommandContext(ctx, flower, full...)
	cmd.Env = b.Env()
	cmd.Dir = b.Workspace
	return cmd
}

func TestFlowerStep_ParallelManifest(t *testing.T) {
	t.Parallel()
	b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main",
		Func: func(r scripted.Request) scripted.Reply { return scripted.Reply{Text: "ECHO " + lastUserText(r)} }}}})
	flower := testbed.BuildBinary(t, "./cmd/flower")
	hook := hookBinary(t)
	runDir := filepath.Join(filepath.Dir(b.Workspace), "runs")
	const n = 8
	var wg sync.WaitGroup
	outs := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := flowerStep(runCtx(t), b, flower, hook, runDir, "--name", fmt.Sprintf("p%d", i), fmt.Sprintf("TASK_%d", i))
			out, err := cmd.CombinedOutput()
			outs[i], errs[i] = string(out), err
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || !strings.Contains(outs[i], fmt.Sprintf("TASK_%d", i)) {
			t.Errorf("flower step %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	rows, err := harness.ReadManifest(filepath.Join(runDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, r := range rows {
		for _, res := range r.Results {
			if res.OK {
				names[res.Step] = true
			}
		}
	}
	if len(rows) != n || len(names) != n {
		t.Fatalf("manifest has %d rows and %d ok steps, want %d each: %+v", len(rows), len(names), n, rows)
	}
}

func TestFlowerStep_JSONAndExitCodes(t *testing.T) {
	t.Parallel()
	bad := scripted.Reply{Fault: &scripted.Fault{Status: 400, Type: "invalid_request_error", Message: "bad thing"}}
	b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main", Replies: []scripted.Reply{
		{Text: "JSON_DONE"}}, Func: func(scripted.Request) scripted.Reply { return bad },
	}}})
	flower := testbed.BuildBinary(t, "./cmd/flower")
	hook := hookBinary(t)
	runDir := filepath.Join(filepath.Dir(b.Workspace), "runs")

	cmd := flowerStep(runCtx(t), b, flower, hook, runDir, "--json", "-")
	cmd.Stdin = strings.NewReader("prompt from stdin")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("flower step --json: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var res harness.StepResult
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil || !res.OK || res.Text != "JSON_DONE" {
		t.Fatalf("last line is not the StepResult: %q (%v)", lines[len(lines)-1], err)
	}
	var ev harness.Event
	if len(lines) < 3 || json.Unmarshal([]byte(lines[0]), &ev) != nil || ev.Kind == "" {
		t.Fatalf("no event lines before the result: %q", lines)
	}

	cmd = flowerStep(runCtx(t), b, flower, hook, runDir, "fails")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "bad thing") {
		t.Fatalf("failing step: err %v, stderr %q", err, stderr.String())
	}

	cmd = flowerStep(runCtx(t), b, flower, hook, runDir, "--role", "nope", "x")
	if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("bad role: want exit 2, got %v", err)
	}
}

// BenchmarkStepVsBare times one trivial step under `flower step` against a
// bare `claude -p` on the same scripted model, interleaved in one run, and
// reports both medians and their ratio (target ≤ 1.10).
func BenchmarkStepVsBare(b *testing.B) {
	bed := testbed.New(b, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main",
		Func: func(scripted.Request) scripted.Reply { return scripted.Reply{Text: "ok"} }}}})
	flower := testbed.BuildBinary(b, "./cmd/flower")
	hook := testbed.BuildBinary(b, "./cmd/flower-hook")
	runDir := filepath.Join(filepath.Dir(bed.Workspace), "runs")
	run := func(cmd *exec.Cmd) time.Duration {
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", cmd.Args[0], err, out)
		}
		return time.Since(start)
	}
	// Warm the page cache and the go build outputs once.
	run(bed.Command(context.Background(), "-p", "--output-format", "stream-json", "--verbose", "hi"))
	var bare, step []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bare = append(bare, run(bed.Command(context.Background(), "-p", "--output-format", "stream-json", "--verbose", "hi")))
		step = append(step, run(flowerStep(context.Background(), bed, flower, hook, runDir, "hi")))
	}
	b.StopTimer()
	mb, ms := median(bare), median(step)
	b.ReportMetric(mb.Seconds(), "bare-s")
	b.ReportMetric(ms.Seconds(), "step-s")
	b.ReportMetric(ms.Seconds()/mb.Seconds(), "ratio")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func TestRun_GuardReportsAndWorkbench(t *testing.T) {
	t.Parallel()
	bash := &scripted.Block{Name: "Bash", Input: json.RawMessage(`{"command":"echo guarded","description":"try bash"}`)}
	b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main", Replies: []scripted.Reply{
		{ToolUse: bash}, {Text: "GAVE_UP"},
	}}}})
	rt := newRuntime(t, b, func(o *harness.Options) { o.Workbench = harness.RunDirWorkbench(b.Workspace, o.RunDir) })
	var guards []harness.Event
	var mu sync.Mutex
	res, err := rt.Run(runCtx(t), harness.NewAgentSpec("judge", "x"), "check it", harness.RunOptions{OnEvent: func(e harness.Event) {
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
	tr := reqs[len(reqs)-1].ToolResults()
	if len(tr) != 1 || !tr[0].IsError || !strings.Contains(tr[0].Content, "judge") {
		t.Fatalf("the whitelist guard did not deny Bash for the judge: %+v", tr)
	}
	if !strings.Contains(reqs[0].System(), "## Workbench: "+rt.Workbench().Root()) || !strings.Contains(reqs[0].System(), "# Workbench index") {
		t.Errorf("workbench block not in the system prompt")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(guards) == 0 || guards[0].Data["decision"] != "deny" || guards[0].Data["guard"] != "whitelist" || guards[0].Step != "judge" {
		t.Fatalf("no whitelist deny report over the socket: %+v", guards)
	}
	if kinds(readEvents(t, rt.EventsPath()))["guard"] == 0 {
		t.Errorf("events.jsonl lacks the guard report")
	}
}

func TestRun_CancelKillsTheGroup(t *testing.T) {
	t.Parallel()
	pidfile := filepath.Join(t.TempDir(), "pid")
	slow := &scripted.Block{Name: "Bash", Input: json.RawMessage(`{"command":"echo $$ > ` + pidfile + ` && sleep 60","description":"wait"}`)}
	b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main", Replies: []scripted.Reply{{ToolUse: slow}, {Text: "late"}}}}})
	rt := newRuntime(t, b, nil)
	spec := harness.NewAgentSpec("worker", "x")
	spec.AllowedTools = []string{"Bash"}
	ctx, cancel := context.WithCancel(runCtx(t))
	go func() {
		for range 200 {
			if _, err := os.Stat(pidfile); err == nil {
				time.Sleep(200 * time.Millisecond)
				cancel()
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	start := time.Now()
	res, err := rt.Run(ctx, spec, "wait a minute", harness.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || !strings.Contains(res.Error, "cancelled") || time.Since(start) > 30*time.Second {
		t.Fatalf("result after %s: %+v", time.Since(start), res)
	}
	data, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			return
		}
	}
	t.Fatalf("the tool's shell %d outlived the step", pid)
}
