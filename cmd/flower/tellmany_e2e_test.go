package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

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
				return scripted.Reply{Text: demoBrief}
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
				poll := demoTool("mcp__flower__inbox", map[string]any{})
				poll.DelayMS = 100
				return poll
			}},
		}}
	})
	flower := testbed.BuildBinary(t, "./cmd/flower")
	runDir := filepath.Join(t.TempDir(), "runs")
	env := flowerEnv(t, bed.Env(), bed.Claude)
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
	lines := jsonLines(t, stdout.Bytes())
	final := lines[len(lines)-1]
	if !final.Get("ok").Bool() || final.Get("unread_messages").Int() != 0 {
		t.Errorf("flow result: %s", final.Raw)
	}
	if !paged.Load() {
		t.Error("no inbox call said that more messages wait")
	}
}
