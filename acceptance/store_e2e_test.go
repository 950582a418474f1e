package acceptance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/pgtest"
	"github.com/flowerhq/flower/testkit/testbed"
)

// machine is one "machine" running flower: its own HOME and run dir.
type machine struct {
	t      *testing.T
	flower string
	env    []string
	dir    string
}

func newMachine(t *testing.T, bed *testbed.Bed, flower, hook string) *machine {
	home := t.TempDir()
	return &machine{t: t, flower: flower, dir: bed.Workspace,
		env: append(testbed.BaseEnv(home, bed.Model.URL()), "FLOWER_CLAUDE="+bed.Claude, "FLOWER_HOOK="+hook,
			"FLOWER_RUN_DIR="+filepath.Join(t.TempDir(), "runs"))}
}

func (m *machine) run(args ...string) (stdout, stderr string, code int) {
	m.t.Helper()
	cmd := testbed.Command(m.t, m.flower, args...)
	cmd.Env, cmd.Dir = m.env, m.dir
	return testbed.Exec(m.t, cmd)
}

// twoMachineScript: step one lists the workspace (an ephemeral command whose
// output names LSMARKER-A), then six more turns, so that on resume the
// listing is older than keep_recent (6) and expires; step two answers.
const twoMachineScript = `{"conversations":[{"name":"main","replies":[
  {"tool_use":{"name":"Bash","input":{"command":"ls","description":"list"}}},
  {"tool_use":{"name":"Bash","input":{"command":"true","description":"t1"}}},
  {"tool_use":{"name":"Bash","input":{"command":"true","description":"t2"}}},
  {"tool_use":{"name":"Bash","input":{"command":"true","description":"t3"}}},
  {"tool_use":{"name":"Bash","input":{"command":"true","description":"t4"}}},
  {"tool_use":{"name":"Bash","input":{"command":"true","description":"t5"}}},
  {"tool_use":{"name":"Bash","input":{"command":"true","description":"t6"}}},
  {"text":"A-DONE"},
  {"text":"B-DONE"}]}]}`

// resumeElsewhere runs step one on machine A and resumes it on machine B,
// both with --store storeA/storeB, and returns the first and the resumed
// request's view of the listing's tool result, and the resumed request.
func resumeElsewhere(t *testing.T, storeA, storeB func(a, b *machine) string) (before, after string, resumed scripted.Request) {
	s, err := scripted.Parse([]byte(twoMachineScript))
	if err != nil {
		t.Fatal(err)
	}
	bed := testbed.New(t, s)
	if err := os.WriteFile(filepath.Join(bed.Workspace, "LSMARKER-A.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	flower := testbed.BuildBinary(t, "./cmd/flower")
	hook := testbed.BuildBinary(t, "./cmd/flower-hook")
	a, b := newMachine(t, bed, flower, hook), newMachine(t, bed, flower, hook)
	out, errA, code := a.run("step", "--json", "--role", "worker", "--store", storeA(a, b), "remember MARKER-FROM-A")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	id := gjson.Get(lines[len(lines)-1], "session_id").String()
	if code != 0 || id == "" {
		t.Fatalf("machine A: exit %d, session %q\n%s\n%s", code, id, out, errA)
	}
	out, errB, code := b.run("step", "--json", "--role", "worker", "--store", storeB(a, b), "--resume", id, "what did A say?")
	if code != 0 || !strings.Contains(out, "B-DONE") {
		t.Fatalf("machine B: exit %d\n%s\n%s", code, out, errB)
	}
	reqs := bed.Model.RequestsFor("main")
	resumed = reqs[len(reqs)-1]
	for _, tr := range reqs[1].ToolResults() {
		before = tr.Content
	}
	if trs := resumed.AllToolResults(); len(trs) > 0 {
		after = trs[0].Content
	}
	return before, after, resumed
}

// TestE2E_ResumeOnAnotherMachine: a step run with --store postgres://… on
// machine A (its HOME, its run dir) resumes with --resume ID on machine B
// (another HOME, another run dir, the same URL): the resumed request carries
// A's conversation, with the old listing expired exactly as when the same
// two steps share one SQLite file (the control).
func TestE2E_ResumeOnAnotherMachine(t *testing.T) {
	t.Parallel()
	u := pgtest.URL(t)
	pgBefore, pgAfter, pgReq := resumeElsewhere(t,
		func(a, b *machine) string { return u }, func(a, b *machine) string { return u })
	file := filepath.Join(t.TempDir(), "shared.db")
	sqBefore, sqAfter, _ := resumeElsewhere(t,
		func(a, b *machine) string { return "sqlite://" + file }, func(a, b *machine) string { return file })

	if !strings.Contains(pgBefore, "LSMARKER-A") || !strings.Contains(sqBefore, "LSMARKER-A") {
		t.Fatalf("control: step one's listing lacks the marker: %q / %q", pgBefore, sqBefore)
	}
	if !strings.Contains(pgReq.Messages().Raw, "remember MARKER-FROM-A") || !strings.Contains(pgReq.Messages().Raw, "A-DONE") {
		t.Fatalf("the resumed request on B lacks A's conversation: %s", pgReq.Messages().Raw)
	}
	if strings.Contains(pgAfter, "LSMARKER-A") || !strings.Contains(pgAfter, "的结果已过期") {
		t.Errorf("on PostgreSQL the old listing was not expired on resume: %q", pgAfter)
	}
	t.Logf("resumed listing on B: %q", pgAfter)

	// A third machine with an empty run dir sees both steps' runs (A's and
	// B's) through the store; its own run dir knows none.
	c := &machine{t: t, flower: testbed.BuildBinary(t, "./cmd/flower"), dir: t.TempDir(),
		env: append(os.Environ(), "FLOWER_RUN_DIR="+filepath.Join(t.TempDir(), "runs"))}
	out, stderr, code := c.run("runs", "--store", u)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "RUN") {
		t.Errorf("runs --store on a third machine: exit %d, want a header and 2 runs:\n%s%s", code, out, stderr)
	}
	if out, _, _ := c.run("runs"); !strings.Contains(out, "no runs") {
		t.Errorf("control: the third machine's own run dir lists runs:\n%s", out)
	}
	if out, stderr, code := c.run("runs", "show", "--json", "--store", u); code != 0 || !strings.Contains(out, `"session_id"`) {
		t.Errorf("runs show --store: exit %d\n%s%s", code, out, stderr)
	}
	if pgAfter != sqAfter {
		t.Errorf("the resumed listing differs between PostgreSQL and SQLite:\n pg:     %q\n sqlite: %q", pgAfter, sqAfter)
	}
}

// TestE2E_BadStoreURL: a bad URL, an unreachable server and a missing
// database each end `flower step` with one line naming the URL (password
// masked) and exit 1, before anything is written: no run dir, no request to
// the model. The control with the real database runs.
func TestE2E_BadStoreURL(t *testing.T) {
	t.Parallel()
	good := pgtest.URL(t)
	s, err := scripted.Parse([]byte(`{"conversations":[{"name":"main","replies":[{"text":"STORE-OK"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	bed := testbed.New(t, s)
	m := newMachine(t, bed, testbed.BuildBinary(t, "./cmd/flower"), testbed.BuildBinary(t, "./cmd/flower-hook"))
	for _, u := range []string{
		"postgres://u:s3cret@host:notaport/db",
		"postgres://u:s3cret@/db?host=" + t.TempDir(),
		"postgres://postgres:s3cret@/nosuchdb?host=" + pgtest.SocketDir(),
	} {
		runDir := filepath.Join(t.TempDir(), "runs")
		_, stderr, code := m.run("step", "--run-dir", runDir, "--store", u, "hello")
		if code != 1 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || strings.Contains(stderr, "s3cret") || !strings.Contains(stderr, "xxxxx") && !strings.Contains(stderr, ":[redacted]@") {
			t.Errorf("--store %s: exit %d, stderr %q; want exit 1 and one line with the password masked", u, code, stderr)
		}
		if _, err := os.Stat(runDir); !os.IsNotExist(err) {
			t.Errorf("--store %s: the run dir was created (%v)", u, err)
		}
	}
	if n := len(bed.Model.Requests()); n != 0 {
		t.Errorf("%d requests reached the model through a bad store", n)
	}
	out, stderr, code := m.run("step", "--store", good, "hello")
	if code != 0 || !strings.Contains(out, "STORE-OK") {
		t.Fatalf("control: exit %d\n%s\n%s", code, out, stderr)
	}
	out, _, code = m.run("sessions", "list", "--store", good)
	if code != 0 || strings.Count(strings.TrimSpace(out), "\n") < 1 {
		t.Errorf("sessions list --store: exit %d\n%s", code, out)
	}
}
