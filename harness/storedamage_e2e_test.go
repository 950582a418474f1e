package harness_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// TestRun_DamagedStoreStartsFresh: 64 garbage bytes in the middle of
// sessions.db do not fail the next step that resumes a session from it: the
// store is moved aside (sessions.db.corrupt-…), a fresh one takes over, and
// the step runs in a fresh session, with a store event saying so. Control:
// the intact store resumes the same session with its history.
func TestRun_DamagedStoreStartsFresh(t *testing.T) {
	t.Parallel()
	for _, damaged := range []bool{true, false} {
		t.Run(map[bool]string{true: "damaged", false: "control"}[damaged], func(t *testing.T) {
			t.Parallel()
			b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main",
				Func: func(scripted.Request) scripted.Reply { return scripted.Reply{Text: "ANSWERED"} }}}})
			spec := harness.NewAgentSpec("plain", "x")
			rt := newRuntime(t, b, nil)
			r1, err := rt.Run(runCtx(t), spec, "REMEMBER_ME_42", harness.RunOptions{StepName: "one"})
			if err != nil || !r1.OK {
				t.Fatalf("step one: %+v %v", r1, err)
			}
			rt.Close()
			db := filepath.Join(rt.RunDir(), "sessions.db")
			os.RemoveAll(filepath.Join(rt.RunDir(), "claude-config", "projects"))
			if damaged {
				testbed.GarblePages(t, db, "REMEMBER_ME_42")
			}
			rt2 := newRuntime(t, b, nil)
			r2, err := rt2.Run(runCtx(t), spec, "what did I say?", harness.RunOptions{StepName: "two", Resume: r1.SessionID})
			if err != nil || !r2.OK {
				t.Fatalf("step two: %+v %v", r2, err)
			}
			reqs := b.Model.Requests()
			history := strings.Contains(reqs[len(reqs)-1].Messages().Raw, "REMEMBER_ME_42")
			fresh := 0
			for _, e := range readEvents(t, rt2.EventsPath()) {
				if e.Kind == harness.EventStore && e.Data["fresh"] == true {
					fresh++
				}
			}
			aside, _ := filepath.Glob(db + ".corrupt-*")
			if !damaged {
				if r2.SessionID != r1.SessionID || !history || fresh != 0 || len(aside) != 0 {
					t.Fatalf("control: session %s→%s history %v fresh %d aside %v", r1.SessionID, r2.SessionID, history, fresh, aside)
				}
				return
			}
			if r2.SessionID == r1.SessionID || history || fresh != 1 || len(aside) != 1 {
				t.Fatalf("damaged: session %s→%s history %v fresh events %d aside %v", r1.SessionID, r2.SessionID, history, fresh, aside)
			}
			// The fresh store works: it holds step two's session.
			rt2.Close()
			rt3 := newRuntime(t, b, nil)
			os.RemoveAll(filepath.Join(rt.RunDir(), "claude-config", "projects"))
			r3, err := rt3.Run(runCtx(t), spec, "and now?", harness.RunOptions{StepName: "three", Resume: r2.SessionID})
			if err != nil || !r3.OK || r3.SessionID != r2.SessionID {
				t.Fatalf("step three on the fresh store: %+v %v", r3, err)
			}
		})
	}
}
