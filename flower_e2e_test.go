package flower_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	flower "github.com/flowerhq/flower"
	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/sessionstore"
	"github.com/flowerhq/flower/testkit/testbed"
)

// notPortable is a Runtime from flower.New on the bed, not portable:
// claude keeps the bed's own HOME/.claude, as `claude` run by hand does.
func notPortable(t *testing.T, b *testbed.Bed, noStore bool) *harness.Runtime {
	t.Helper()
	o := flower.NewOptions(b.Workspace)
	o.Portable = false
	o.NoStore = noStore
	o.RunDir = filepath.Join(filepath.Dir(b.Workspace), "runs")
	o.Env = b.Env()
	o.Claude = b.Claude
	o.HookPath = testbed.BuildBinary(t, "./cmd/flower-hook")
	o.Resilience = harness.Resilience{}
	o.CLIRetries = 0
	rt, err := flower.New(t.Context(), o)
	if err != nil {
		t.Fatalf("flower.New: %v", err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

func stepCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// resumeWithoutCLIFiles runs a step, deletes the transcripts claude wrote
// into the user's config dir and resumes the session: only the store can
// give the resumed claude its history.
func resumeWithoutCLIFiles(t *testing.T, noStore bool) (harness.StepResult, harness.StepResult, *testbed.Bed, *harness.Runtime) {
	b := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{Name: "main", Replies: []scripted.Reply{
		{Text: "FIRST_ANSWER"}, {Text: "SECOND_ANSWER"},
	}}}})
	rt := notPortable(t, b, noStore)
	spec := harness.NewAgentSpec("plain", "x")
	r1, err := rt.Run(stepCtx(t), spec, "REMEMBER_ME_42", harness.RunOptions{StepName: "one"})
	if err != nil || !r1.OK {
		t.Fatalf("step one: %+v %v", r1, err)
	}
	projects := filepath.Join(b.Home, ".claude", "projects")
	if _, err := os.Stat(projects); err != nil {
		t.Fatalf("a step that is not portable wrote no transcript into the user's config dir: %v", err)
	}
	if err := os.RemoveAll(projects); err != nil {
		t.Fatal(err)
	}
	r2, err := rt.Run(stepCtx(t), spec, "what did I say?", harness.RunOptions{StepName: "two", Resume: r1.SessionID})
	if err != nil {
		t.Fatalf("step two: %v", err)
	}
	return r1, r2, b, rt
}

// The store is in the path of every resume, portable or not: a
// Runtime from flower.New with Portable false resumes a session whose
// CLI files are gone, from sessions.db, through a private claude-resume-*
// folder that is gone again after the step; the resumed transcript is
// mirrored under the workspace's project key.
func TestE2E_NotPortableResumesThroughTheStore(t *testing.T) {
	t.Parallel()
	r1, r2, b, rt := resumeWithoutCLIFiles(t, false)
	if !r2.OK || r2.Text != "SECOND_ANSWER" || r2.SessionID != r1.SessionID {
		t.Fatalf("step two: %+v", r2)
	}
	reqs := b.Model.Requests()
	last := reqs[len(reqs)-1]
	if msgs := last.Messages().Raw; !strings.Contains(msgs, "REMEMBER_ME_42") || !strings.Contains(msgs, "FIRST_ANSWER") {
		t.Fatalf("the resumed request lacks step one's history: %s", msgs)
	}
	left, _ := filepath.Glob(filepath.Join(rt.RunDir(), "*", "*", "claude-resume-*"))
	if len(left) > 0 {
		t.Errorf("resume config dirs left behind: %v", left)
	}
	if _, err := os.Stat(filepath.Join(b.Home, ".claude", "projects")); err == nil {
		t.Error("the resumed step wrote into the user's config dir; it should run in its resume dir")
	}
	st, err := sessionstore.Open(filepath.Join(rt.RunDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	refs, err := st.Sessions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range refs {
		keys = append(keys, r.Key.ProjectKey)
	}
	want := harness.ProjectKey(b.Workspace)
	if !strings.Contains(strings.Join(keys, " "), want) {
		t.Errorf("store keys %v: the resumed session is not under the workspace's key %s", keys, want)
	}
}

// Control: without the store (NoStore) the same resume has nothing to load
// once claude's own files are gone, so the test above can fail.
func TestE2E_NotPortableResumeWithoutStoreLosesHistory(t *testing.T) {
	t.Parallel()
	_, r2, b, _ := resumeWithoutCLIFiles(t, true)
	reqs := b.Model.Requests()
	if r2.OK && strings.Contains(reqs[len(reqs)-1].Messages().Raw, "REMEMBER_ME_42") {
		t.Fatalf("without a store the resume still saw step one's history: %+v", r2)
	}
}
