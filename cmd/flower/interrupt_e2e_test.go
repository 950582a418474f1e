package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowerhq/flower/internal/testbed"
	"github.com/flowerhq/flower/scripted"
)

// TestE2E_HumanInterrupt types Ctrl-C into a running `flower` at a terminal:
// flower asks for the words, and the step resumes its session with them.
func TestE2E_HumanInterrupt(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("FLOWER_REQUIRE_CLAUDE") == "1" {
			t.Fatal("tmux is missing: run scripts/setup.sh")
		}
		t.Skip("SKIPPING: tmux is missing (scripts/setup.sh installs it)")
	}
	const brief = "## 目标\\nx\\n## 验收标准\\ny\\n## 边界\\nz\\n## 未知与假设\\nw"
	bed := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{
		Name: "clarify", Match: scripted.Match{System: "你是需求澄清者"},
		Replies: []scripted.Reply{{Text: "too slow", DelayMS: 60000}},
		Func: func(r scripted.Request) scripted.Reply {
			return scripted.Reply{Text: strings.ReplaceAll(brief, `\n`, "\n")}
		},
	}}})
	flower := testbed.BuildBinary(t, "./cmd/flower")
	sock := "flower-int-" + filepath.Base(t.TempDir())
	envFile := filepath.Join(t.TempDir(), "env")
	var sb strings.Builder
	for _, kv := range append(bed.Env(), "FLOWER_CLAUDE="+bed.Claude, "FLOWER_HOOK="+testbed.BuildBinary(t, "./cmd/flower-hook")) {
		sb.WriteString("export " + shellQuote(kv) + "\n")
	}
	os.WriteFile(envFile, []byte(sb.String()), 0o600)
	script := "trap : INT; . " + envFile + "; cd " + bed.Workspace + "; " + flower + " --no-self-test --clarify-only --run-dir " +
		filepath.Join(t.TempDir(), "runs") + " 'make a thing'; echo FLOWER-EXIT=$?; sleep 60"
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-L", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v %s", args, err, out)
		}
		return string(out)
	}
	tmux("new-session", "-d", "-s", "t", "-x", "150", "-y", "40", "sh", "-c", script)
	t.Cleanup(func() { exec.Command("tmux", "-L", sock, "kill-server").Run() })
	waitFor := func(what string) {
		t.Helper()
		for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
			if strings.Contains(tmux("capture-pane", "-t", "t", "-p"), what) {
				return
			}
		}
		t.Fatalf("screen never showed %q:\n%s", what, tmux("capture-pane", "-t", "t", "-p"))
	}
	// Wait until the slow request is in flight, then interrupt.
	for end := time.Now().Add(60 * time.Second); len(bed.Model.RequestsFor("clarify")) == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the clarifier never called the model:\n%s", tmux("capture-pane", "-t", "t", "-p"))
		}
	}
	tmux("send-keys", "-t", "t", "C-c")
	waitFor("What should it do instead?")
	tmux("send-keys", "-t", "t", "WORDS-FROM-THE-PERSON", "Enter")
	waitFor("FLOWER-EXIT=0")

	reqs := bed.Model.RequestsFor("clarify")
	last := reqs[len(reqs)-1]
	if !strings.Contains(last.Text(), "WORDS-FROM-THE-PERSON") {
		t.Fatalf("the resumed request does not carry the words; %d requests", len(reqs))
	}
	// Same session: the history holds the original ask and the interrupt.
	if h := last.Messages().Raw; !strings.Contains(h, "诉求: make a thing") || !strings.Contains(h, "[Request interrupted by user]") {
		t.Error("the interrupt did not resume the same session")
	}
}
