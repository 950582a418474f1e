package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/flowerbin"
	"github.com/flowerhq/flower/testkit/testbed"
)

const tellMsg = "TELL-MSG 也要支持乘法"

// tellScript: the clarifier answers with a brief at once; the coordinator
// polls its inbox until the told message has arrived twice (at most ~400
// polls), then finishes.
func tellScript(string) *scripted.Script {
	return flowerbin.PollingScript(func(r scripted.Request) string {
		told := 0 // the test tells twice (text, then --json)
		for _, tr := range r.AllToolResults() {
			told += strings.Count(tr.Content, tellMsg)
		}
		switch {
		case told >= 2:
			return "收到留言,按新要求做完了。"
		case len(r.AllToolResults()) > 400:
			return "一直没有留言。"
		}
		return ""
	})
}

// TestE2E_Tell: `flower tell` from another process lands in the running
// coordinator's next inbox call (asserted on the scripted model's recorded
// requests), names the run and step, and is in the Q&A log with its time.
// With no flow running, tell exits 1 with a clear message.
func TestE2E_Tell(t *testing.T) {
	t.Parallel()
	bed := testbed.NewFor(t, tellScript)
	flower := testbed.BuildBinary(t, "./cmd/flower")
	runDir := filepath.Join(t.TempDir(), "runs")
	env := flowerbin.Env(t, bed.Env(), bed.Claude)
	tell := func(extra ...string) (string, int) {
		cmd := testbed.Command(t, flower, append([]string{"tell", "--run-dir", runDir, "-C", bed.Workspace, tellMsg}, extra...)...)
		cmd.Env, cmd.Dir = env, t.TempDir()
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	if out, code := tell(); code != 1 || !strings.Contains(out, "no flow is running in "+bed.Workspace) {
		t.Fatalf("tell before any flow: exit %d\n%s", code, out)
	}

	run, stdout, stderr := startPolledFlow(t, flower, env, runDir, bed)
	before := len(bed.Model.RequestsFor("coordinator"))
	out, code := tell()
	after := len(bed.Model.RequestsFor("coordinator")) // the message is queued by now
	if code != 0 {
		t.Fatalf("tell: exit %d\n%s", code, out)
	}
	m := regexp.MustCompile(`delivered to run (\S+), step 执行`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("tell does not name the run and step:\n%s", out)
	}
	// A second message, with --json: one object in the schema.
	js, code := tell("--json")
	if code != 0 || gjson.Get(js, "kind").String() != "told" || gjson.Get(js, "run").String() != m[1] || gjson.Get(js, "step").String() != "执行" {
		t.Fatalf("tell --json: exit %d %s", code, js)
	}
	checkSchema(t, "tell --json", strings.TrimSpace(js))
	if err := run.Wait(); err != nil {
		t.Fatalf("flower: %v\nstderr: %s\nstdout: %s", err, stderr.String(), flowerbin.Tail(stdout.Bytes()))
	}
	lines := flowerbin.JSONLines(t, stdout.Bytes())
	final := lines[len(lines)-1]
	if !final.Get("ok").Bool() || final.Get("run").String() != m[1] {
		t.Fatalf("flow result %s (tell named run %s)", final.Raw, m[1])
	}

	reqs := bed.Model.RequestsFor("coordinator")
	got := -1
	for i, r := range reqs {
		if strings.Contains(r.LastUser(), tellMsg) {
			got = i
			break
		}
	}
	switch {
	case got < 0:
		t.Fatalf("no coordinator request carries the told message (%d requests)", len(reqs))
	case got < before:
		t.Fatalf("the message showed up in request %d, before it was told (%d)", got, before)
	case got > after+1:
		// Once tell returns, the next inbox call takes it: the request after
		// the next one at the latest (one poll may already be in flight).
		t.Errorf("the message reached the coordinator only in request %d; it was queued at request %d", got, after)
	}
	n := 0
	for _, tr := range reqs[len(reqs)-1].AllToolResults() {
		n += strings.Count(tr.Content, tellMsg)
	}
	if n != 2 {
		t.Errorf("two messages told, the coordinator's inbox results carry %d", n)
	}
	if res := reqs[got].ToolResults(); len(res) != 1 || !strings.Contains(res[0].Content, tellMsg) {
		t.Errorf("the message did not come as the inbox tool's result: %+v", res)
	}
	log, _ := os.ReadFile(filepath.Join(bed.Workspace, ".flower", "notes", "问答记录.md"))
	if !regexp.MustCompile(`## 留言 \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(执行\)\n\n` + tellMsg).Match(log) {
		t.Errorf("Q&A log lacks the message with its time:\n%s", log)
	}
	// The pickup is recorded: a read mark in the Q&A log (the 留言 entry
	// no longer waits forever), a "message" read event in --json, and both
	// lines in runs show. TestE2E_TellUnreadAtTheEnd is the control.
	if !regexp.MustCompile(`## 已读 \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(执行\)\n\n> ` + tellMsg).Match(log) {
		t.Errorf("Q&A log lacks the read mark:\n%s", log)
	}
	read := 0
	for _, l := range lines {
		if l.Get("kind").String() == "message" && l.Get("data.state").String() == "read" && l.Get("data.text").String() == tellMsg {
			read++
		}
	}
	if read != 2 {
		t.Errorf("--json carries %d message-read events, want 2", read)
	}
	show := testbed.Command(t, flower, "runs", "show", "--run-dir", runDir, "-C", bed.Workspace)
	show.Env, show.Dir = env, t.TempDir()
	shown, _ := show.CombinedOutput()
	for _, w := range []string{"message told in 执行: " + tellMsg, "message read in 执行: " + tellMsg} {
		if !strings.Contains(string(shown), w) {
			t.Errorf("runs show lacks %q:\n%s", w, shown)
		}
	}
	if out, code := tell(); code != 1 || !strings.Contains(out, "no flow is running") {
		t.Errorf("tell after the flow ended: exit %d\n%s", code, out)
	}
	if gjson.Get(final.Raw, "exit_code").Int() != 0 {
		t.Errorf("exit code %s", final.Get("exit_code").Raw)
	}
}

// startPolledFlow starts a --no-goal flow ("写个 hello.txt") in bed's
// workspace and waits until its coordinator has checked its inbox at least
// once (its second request).
func startPolledFlow(t *testing.T, flower string, env []string, runDir string, bed *testbed.Bed) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	run, stdout, stderr := startTellFlow(t, flower, env, runDir, bed)
	if !testbed.Eventually(testbed.Left(t), func() bool { return len(bed.Model.RequestsFor("coordinator")) >= 2 }) {
		t.Fatalf("the coordinator never polled its inbox\nstderr: %s\nstdout: %s", stderr.String(), flowerbin.Tail(stdout.Bytes()))
	}
	return run, stdout, stderr
}

// startTellFlow starts the --no-goal --json flow ("写个 hello.txt") in bed's
// workspace, unattended, with runDir as its run dir.
func startTellFlow(t *testing.T, flower string, env []string, runDir string, bed *testbed.Bed) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	flowerbin.MarkSelfTested(t, runDir, bed.Claude)
	run := testbed.Command(t, flower, "--json", "--timeout", "0", "--no-goal", "--run-dir", runDir, "-C", bed.Workspace, "写个 hello.txt")
	run.Env, run.Dir = env, t.TempDir()
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	return run, &stdout, &stderr
}

// manyTold is how many messages TestE2E_TellManyAllArrive tells: more than
// two inbox pages.
const manyTold = 45

// toldSeen counts the distinct told messages in r's tool results.
func toldSeen(r scripted.Request) int {
	seen := map[string]bool{}
	for _, tr := range r.AllToolResults() {
		for i := range manyTold {
			if m := fmt.Sprintf("MANY-%02d;", i); strings.Contains(tr.Content, m) {
				seen[m] = true
			}
		}
	}
	return len(seen)
}

// TestE2E_TellManyAllArrive: 45 messages told while the coordinator polls
// its inbox all reach it, in pages (one call finds them all waiting; the
// tool's text asks for the next call), and the flow result counts no
// unread message.
func TestE2E_TellManyAllArrive(t *testing.T) {
	t.Parallel()
	var paged atomic.Bool
	release := make(chan struct{}) // closed once every message is told
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free()
	bed := testbed.NewFor(t, func(string) *scripted.Script {
		return &scripted.Script{Conversations: []scripted.Conversation{
			{Name: "clarify", Match: scripted.Match{System: "你是需求澄清者"}, Func: func(scripted.Request) scripted.Reply {
				return scripted.Reply{Text: flowerbin.DemoBrief}
			}},
			{Name: "coordinator", Match: scripted.Match{System: "你是协调者"}, Func: func(r scripted.Request) scripted.Reply {
				if strings.Contains(r.LastUser(), "条留言没取完") {
					paged.Store(true)
				}
				if toldSeen(r) == manyTold || len(r.AllToolResults()) > 600 {
					return scripted.Reply{Text: "留言都看过了。"}
				}
				if len(r.AllToolResults()) >= 2 {
					select { // the next inbox call finds every message waiting
					case <-release:
					case <-time.After(2 * time.Minute):
					}
				}
				poll := flowerbin.Tool("mcp__flower__inbox", map[string]any{})
				poll.DelayMS = 100
				return poll
			}},
		}}
	})
	flower := testbed.BuildBinary(t, "./cmd/flower")
	runDir := filepath.Join(t.TempDir(), "runs")
	env := flowerbin.Env(t, bed.Env(), bed.Claude)
	run, stdout, stderr := startPolledFlow(t, flower, env, runDir, bed)
	// Told while the model holds its answer, so that one inbox call finds
	// them all waiting: only paging hands them all over.
	for i := range manyTold {
		cmd := testbed.Command(t, flower, "tell", "--run-dir", runDir, "-C", bed.Workspace, fmt.Sprintf("MANY-%02d; 消息正文", i))
		cmd.Env, cmd.Dir = env, t.TempDir()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("tell %d: %v %s", i, err, out)
		}
	}
	free()
	if err := run.Wait(); err != nil {
		t.Fatalf("flower: %v\nstderr: %s", err, stderr.String())
	}
	reqs := bed.Model.RequestsFor("coordinator")
	if n := toldSeen(reqs[len(reqs)-1]); n != manyTold {
		t.Fatalf("%d of %d told messages reached the coordinator", n, manyTold)
	}
	lines := flowerbin.JSONLines(t, stdout.Bytes())
	final := lines[len(lines)-1]
	if !final.Get("ok").Bool() || final.Get("unread_messages").Int() != 0 {
		t.Errorf("flow result: %s", final.Raw)
	}
	if !paged.Load() {
		t.Error("no inbox call said that more messages wait")
	}
}

// TestE2E_TellUnreadAtTheEnd: a message told while the coordinator is
// finishing (after its last inbox call) never reaches the model; the flow's
// result counts it (unread_messages 1) and the Q&A log keeps it, so the
// person can tell it again. TestE2E_TellManyAllArrive is the control (every
// message read: 0).
func TestE2E_TellUnreadAtTheEnd(t *testing.T) {
	t.Parallel()
	holding, release := make(chan struct{}), make(chan struct{})
	var hold, free sync.Once
	defer free.Do(func() { close(release) })
	bed := testbed.NewFor(t, func(string) *scripted.Script {
		return flowerbin.PollingScript(func(r scripted.Request) string {
			if len(r.AllToolResults()) == 0 {
				return ""
			}
			hold.Do(func() { close(holding) })
			select { // hold the final answer until the message is told
			case <-release:
			case <-time.After(2 * time.Minute):
			}
			return "做完了。"
		})
	})
	flower := testbed.BuildBinary(t, "./cmd/flower")
	runDir := filepath.Join(t.TempDir(), "runs")
	env := flowerbin.Env(t, bed.Env(), bed.Claude)
	run, stdout, stderr := startTellFlow(t, flower, env, runDir, bed)
	select {
	case <-holding:
	case <-time.After(testbed.Left(t)):
		t.Fatalf("the coordinator never came back from its inbox call\nstderr: %s", stderr.String())
	}
	cmd := testbed.Command(t, flower, "tell", "--run-dir", runDir, "-C", bed.Workspace, "LATE-1; 也写个 bye.txt")
	cmd.Env, cmd.Dir = env, t.TempDir()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tell: %v %s", err, out)
	}
	free.Do(func() { close(release) })
	if err := run.Wait(); err != nil {
		t.Fatalf("flower: %v\nstderr: %s", err, stderr.String())
	}
	for _, r := range bed.Model.RequestsFor("coordinator") {
		if strings.Contains(r.Text(), "LATE-1") {
			t.Fatalf("the coordinator was sent the late message: %.800s", r.Text())
		}
	}
	lines := flowerbin.JSONLines(t, stdout.Bytes())
	if final := lines[len(lines)-1]; final.Get("kind").String() != "flow_result" || final.Get("unread_messages").Int() != 1 {
		t.Errorf("flow result (want unread_messages 1): %s", final.Raw)
	}
	log, err := os.ReadFile(filepath.Join(bed.Workspace, ".flower", "notes", flow.DefaultLogName))
	if err != nil || !strings.Contains(string(log), "LATE-1") {
		t.Errorf("the Q&A log lacks the told message: %v\n%s", err, log)
	}
	if strings.Contains(string(log), "> LATE-1") {
		t.Errorf("a message no inbox call took has a read mark:\n%s", log)
	}
	show := testbed.Command(t, flower, "runs", "show", "--run-dir", runDir, "-C", bed.Workspace)
	show.Env, show.Dir = env, t.TempDir()
	shown, _ := show.CombinedOutput()
	if !strings.Contains(string(shown), "message told in 执行: LATE-1") || strings.Contains(string(shown), "message read in 执行: LATE-1") {
		t.Errorf("runs show: want LATE-1 told and not read:\n%s", shown)
	}
}
