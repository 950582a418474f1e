package harness_test

import (
	"strings"
	"testing"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// TestRun_OwnSessionNeverWrittenStartsFresh: a flow resumes a step's own
// session that claude never wrote (its attempt was stopped right after
// claude named it, as a worker stops its flows when its lease ran out in a
// database outage): neither the store nor claude's config dir holds it.
// With RunOptions.ResumeOwn the step runs in a fresh session, with a store
// event saying so (before, every retry of the flow failed the same way).
// Controls: without ResumeOwn the same resume fails as claude's does ("No
// conversation found"), and a stored session is resumed with its history.
func TestRun_OwnSessionNeverWrittenStartsFresh(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name         string
		own, written bool
	}{
		{"own, never written", true, false},
		{"control: not own", false, false},
		{"control: own, stored", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main",
				Func: func(scripted.Request) scripted.Reply { return scripted.Reply{Text: "ANSWERED"} }}}})
			spec := harness.NewAgentSpec("plain", "x")
			rt := newRuntime(t, b, nil)
			id := "0b6f2d1e-5c1a-4f7e-9d3a-2a4c6e8f0b12" // named, never written
			if c.written {
				r1, err := rt.Run(runCtx(t), spec, "REMEMBER_ME_42", harness.RunOptions{StepName: "one"})
				if err != nil || !r1.OK {
					t.Fatalf("step one: %+v %v", r1, err)
				}
				id = r1.SessionID
			}
			r, err := rt.Run(runCtx(t), spec, "what did I say?", harness.RunOptions{StepName: "two", Resume: id, ResumeOwn: c.own})
			if err != nil {
				t.Fatal(err)
			}
			fresh := 0
			for _, e := range readEvents(t, rt.EventsPath()) {
				if e.Kind == harness.EventStore && e.Data["fresh"] == true {
					fresh++
				}
			}
			reqs := b.Model.Requests()
			switch {
			case !c.own:
				if r.OK || !strings.Contains(r.Error, "No conversation found") || fresh != 0 {
					t.Fatalf("control: an unknown resume of the caller's own: ok %v error %q fresh events %d", r.OK, r.Error, fresh)
				}
			case c.written:
				if !r.OK || r.SessionID != id || fresh != 0 || !strings.Contains(reqs[len(reqs)-1].Messages().Raw, "REMEMBER_ME_42") {
					t.Fatalf("control: the stored session: ok %v session %s→%s fresh events %d", r.OK, id, r.SessionID, fresh)
				}
			default:
				if !r.OK || r.SessionID == id || r.SessionID == "" || fresh != 1 || len(reqs) != 1 {
					t.Fatalf("never written: ok %v error %q session %s→%s fresh events %d, %d requests", r.OK, r.Error, id, r.SessionID, fresh, len(reqs))
				}
			}
		})
	}
}
