package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/flowerhq/flower/testkit/fakesecrets"
	"github.com/flowerhq/flower/testkit/pgtest"
)

// TestQueueBadInput: each bad invocation of queue and worker ends with one
// line naming the fix — a usage error (exit 2) before anything is opened,
// or exit 1 for a store that is not PostgreSQL. The control: queue ls on a
// real database answers.
func TestQueueBadInput(t *testing.T) {
	t.Setenv("FLOWER_STORE", "")
	pg := "postgres://nobody@/none?host=/nonexistent"
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"queue", "ls"}, 2, "--store postgres://"},
		{[]string{"queue", "add", "--workspace", "/x", "--store", pg}, 2, "say what the flow should do"},
		{[]string{"queue", "add", "--store", pg, "fix it"}, 2, "--repo URL"},
		{[]string{"queue", "add", "--repo", "u", "--workspace", "/w", "--store", pg, "fix it"}, 2, "one of them"},
		{[]string{"queue", "add", "--workspace", "rel/ws", "--store", pg, "fix it"}, 2, "absolute path"},
		{[]string{"queue", "add", "--ref", "main", "--workspace", "/w", "--store", pg, "fix it"}, 2, "--ref needs --repo"},
		{[]string{"queue", "show", "--store", pg, "abc"}, 2, "not a job id"},
		{[]string{"queue", "cancel", "--store", pg}, 2, "one job id"},
		{[]string{"queue", "ls", "--store", "/tmp/sessions.db"}, 1, "needs a PostgreSQL store"},
		{[]string{"worker", "--store", "sqlite:///tmp/s.db"}, 1, "needs a PostgreSQL store"},
		{[]string{"worker", "--concurrency", "0", "--store", pg}, 2, "--concurrency"},
		{[]string{"worker", "--store", pg, "extra"}, 2, "takes no arguments"},
	} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), append([]string{"flower"}, c.args...), strings.NewReader(""), &out, &errb)
		if code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("flower %v: exit %d, stderr %q; want exit %d naming %q", c.args, code, errb.String(), c.code, c.want)
		}
	}
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"flower", "queue", "ls", "--store", pgtest.URL(t)}, nil, &out, &errb); code != 0 || !strings.Contains(out.String(), "no flows queued") {
		t.Errorf("control: queue ls on a real database: exit %d, %q %q", code, out.String(), errb.String())
	}
}

// TestRedactAsk: an ask with secrets is queued without them and stderr
// says how to pass them instead; an ask without one is queued as written
// and nothing is said (the control).
func TestRedactAsk(t *testing.T) {
	for _, s := range fakesecrets.Samples() {
		var errb bytes.Buffer
		got := redactAsk(&errb, "deploy with\n"+s.Text+"\nand report")
		for _, sec := range s.Secrets {
			if strings.Contains(got, sec) {
				t.Errorf("%s: the queued ask holds %.12s…", s.Name, sec)
			}
		}
		if !strings.Contains(errb.String(), "pass secrets through the worker's environment") {
			t.Errorf("%s: stderr %q", s.Name, errb.String())
		}
	}
	var errb bytes.Buffer
	if got := redactAsk(&errb, "fix the failing test"); got != "fix the failing test" || errb.Len() != 0 {
		t.Errorf("plain ask: %q, stderr %q", got, errb.String())
	}
}
