package hooks_test

import (
	"strings"
	"testing"

	"github.com/flowerhq/flower/hooks"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// driverRepo makes the bed's workspace a repository with a changed a.txt
// that .gitattributes gives the diff driver x; with textconv, the
// repository's own config sets diff.x.textconv to a harmless echo.
func driverRepo(t *testing.T, bed *testbed.Bed, textconv bool) {
	t.Helper()
	testbed.GitInit(t, bed.Workspace)
	putFile(t, bed.Workspace, "a.txt", []byte("one\n"))
	putFile(t, bed.Workspace, ".gitattributes", []byte("*.txt diff=x\n"))
	git := func(args ...string) {
		t.Helper()
		c := testbed.Command(t, "git", args...)
		c.Dir = bed.Workspace
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	git("add", "a.txt", ".gitattributes")
	git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "a")
	if textconv {
		git("config", "diff.x.textconv", "echo CONVERTED")
	}
	putFile(t, bed.Workspace, "a.txt", []byte("two\n"))
}

// TestE2E_GlanceRefusesRepoDrivers: the coordinator's `git diff` in a
// repository whose own config names a textconv is refused through
// delegate --glance --sandbox (the model sees the key in the refusal) and
// the driver never runs. Controls: without flower's guard the same glance
// runs the driver (its output shows CONVERTED); in the same repository
// without the key the glance passes and shows the change.
func TestE2E_GlanceRefusesRepoDrivers(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	hook := testbed.BuildBinary(t, "./cmd/flower-hook")
	for _, c := range []struct {
		name           string
		textconv, hook bool
		want           string
		isError        bool
	}{
		{"refused", true, true, "diff.x.textconv", true},
		{"control: unguarded runs the driver", true, false, "CONVERTED", false},
		{"control: a clean repository", false, true, "+two", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bed := mainBed(t, "look", bashCall("git diff", "look"), scripted.Reply{Text: "looked"})
			driverRepo(t, bed, c.textconv)
			args := []string{"--allowedTools", "Bash"}
			if c.hook {
				args = append(args, "--settings", writeSettings(t, bed.Home,
					hookEntry{"PreToolUse", hooks.DefaultDelegateTools, hooks.DenyCommand(hook + " delegate --glance --sandbox")}))
			}
			run := runClaude(t, bed, nil, "look", args...)
			if run.Result.Get("result").String() != "looked" {
				t.Fatalf("exit %d result %s stderr %s", run.ExitCode, run.Result.Raw, run.Stderr)
			}
			r := lastResult(t, bed.Model.RequestsFor("main")[1])
			if r.IsError != c.isError || !strings.Contains(r.Content, c.want) {
				t.Errorf("git diff answered %+v, want %q (error %v)", r, c.want, c.isError)
			}
			if c.hook && strings.Contains(r.Content, "CONVERTED") {
				t.Errorf("the repository's textconv ran: %+v", r)
			}
		})
	}
}
