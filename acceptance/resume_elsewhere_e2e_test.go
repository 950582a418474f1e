package acceptance

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/pgtest"
	"github.com/flowerhq/flower/testkit/testbed"
)

// TestE2E_ResumeByIDOnAnotherPath: a step run on machine A in workspace
// /…/a resumes with --resume ID on machine B in workspace /…/b (other HOME,
// run dir and path, one PostgreSQL store): B's request carries A's
// conversation. Machine C (a third path) then finds the session under two
// workspaces, resumes the newest (B's, which carries both) and says so.
// Control: without the store B's claude does not find the session.
func TestE2E_ResumeByIDOnAnotherPath(t *testing.T) {
	t.Parallel()
	s, err := scripted.Parse([]byte(`{"conversations":[{"name":"main","replies":[{"text":"A-DONE"},{"text":"B-DONE"},{"text":"C-DONE"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	bed := testbed.New(t, s)
	u := pgtest.URL(t)
	flower := testbed.BuildBinary(t, "./cmd/flower")
	hook := testbed.BuildBinary(t, "./cmd/flower-hook")
	a, b, c := newMachine(t, bed, flower, hook), newMachine(t, bed, flower, hook), newMachine(t, bed, flower, hook)
	for _, m := range []*machine{a, b, c} {
		m.dir = t.TempDir() // each machine its own checkout path
	}
	out, errA, code := a.run("step", "--json", "--role", "worker", "--store", u, "remember MARKER-FROM-A")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	id := gjson.Get(lines[len(lines)-1], "session_id").String()
	if code != 0 || id == "" {
		t.Fatalf("machine A: exit %d, session %q\n%s\n%s", code, id, out, errA)
	}
	// Control: B without the store has no such session.
	if out, errB, code := b.run("step", "--role", "worker", "--resume", id, "no store"); code == 0 {
		t.Fatalf("control: machine B resumed A's session without the store:\n%s\n%s", out, errB)
	}
	out, errB, code := b.run("step", "--role", "worker", "--store", u, "--resume", id, "MARKER-FROM-B: what did A say?")
	if code != 0 || !strings.Contains(out, "B-DONE") {
		t.Fatalf("machine B: exit %d\n%s\n%s", code, out, errB)
	}
	reqs := bed.Model.RequestsFor("main")
	if got := reqs[len(reqs)-1].Messages().Raw; !strings.Contains(got, "remember MARKER-FROM-A") || !strings.Contains(got, "A-DONE") {
		t.Fatalf("B's request lacks A's conversation: %s", got)
	}
	if strings.Contains(errB, "workspaces") {
		t.Errorf("B warned although one workspace held the session: %s", errB)
	}
	out, errC, code := c.run("step", "--role", "worker", "--store", u, "--resume", id, "and now?")
	if code != 0 || !strings.Contains(out, "C-DONE") {
		t.Fatalf("machine C: exit %d\n%s\n%s", code, out, errC)
	}
	if !strings.Contains(errC, "stored under 2 workspaces; resuming the newest") {
		t.Errorf("C did not say which of the two copies it resumed: %q", errC)
	}
	reqs = bed.Model.RequestsFor("main")
	got := reqs[len(reqs)-1].Messages().Raw
	for _, want := range []string{"remember MARKER-FROM-A", "A-DONE", "MARKER-FROM-B", "B-DONE"} {
		if !strings.Contains(got, want) {
			t.Errorf("C's request lacks %q (the newest copy is B's, which continues A's): %s", want, got)
		}
	}
}
