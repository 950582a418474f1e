package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

// TestE2E_HumanInterrupt types Ctrl-C into a running `flower` at a terminal:
// flower asks for the words, and the step resumes its session with them.
func TestE2E_HumanInterrupt(t *testing.T) {
	t.Parallel()
	const brief = "## 目标\\nx\\n## 验收标准\\ny\\n## 边界\\nz\\n## 未知与假设\\nw"
	bed := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{
		Name: "clarify", Match: scripted.Match{System: "你是需求澄清者"},
		Replies: []scripted.Reply{{Text: "too slow", DelayMS: 60000}},
		Func: func(r scripted.Request) scripted.Reply {
			return scripted.Reply{Text: strings.ReplaceAll(brief, `\n`, "\n")}
		},
	}}})
	last, _ := interruptAt(t, bed, "clarify", "WORDS-FROM-THE-PERSON", "--no-self-test --clarify-only", "'make a thing'")
	if !strings.Contains(last.Text(), "WORDS-FROM-THE-PERSON") {
		t.Fatalf("the resumed request does not carry the words")
	}
	// Same session: the history holds the original ask and the interrupt.
	if h := last.Messages().Raw; !strings.Contains(h, "诉求: make a thing") || !strings.Contains(h, "[Request interrupted by user]") {
		t.Error("the interrupt did not resume the same session")
	}
}

// TestE2E_StepHumanInterrupt: the same at a terminal for `flower step`.
func TestE2E_StepHumanInterrupt(t *testing.T) {
	t.Parallel()
	bed := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{
		Name: "main", Replies: []scripted.Reply{{Text: "too slow", DelayMS: 60000}},
		Func: func(scripted.Request) scripted.Reply { return scripted.Reply{Text: "STEP-RESUMED-OK"} },
	}}})
	last, term := interruptAt(t, bed, "main", "STEP-WORDS", "step", "'a long job'")
	if !strings.Contains(term.screen(), "STEP-RESUMED-OK") {
		t.Errorf("the resumed step's answer is not on screen:\n%s", term.screen())
	}
	if !strings.Contains(last.Text(), "STEP-WORDS") || !strings.Contains(last.Messages().Raw, "a long job") {
		t.Errorf("the resumed request lacks the words or the original prompt")
	}
}

// interruptAt runs `flower FLAGS --run-dir DIR PROMPT` at a terminal over
// bed, types Ctrl-C once conversation conv's request is in flight, answers
// flower's question with words and waits for flower to exit 0. It returns
// conv's last request (the resumed one) and the terminal.
func interruptAt(t *testing.T, bed *testbed.Bed, conv, words, flags, prompt string) (scripted.Request, *terminal) {
	t.Helper()
	flower := testbed.BuildBinary(t, "./cmd/flower")
	env := flowerEnv(t, bed.Env(), bed.Claude)
	term := newTerminal(t, env, bed.Workspace, flower+" "+flags+" --run-dir "+filepath.Join(t.TempDir(), "runs")+" "+prompt)
	if !testbed.Eventually(60*time.Second, func() bool { return len(bed.Model.RequestsFor(conv)) > 0 }) {
		t.Fatalf("conversation %s never called the model:\n%s", conv, term.screen())
	}
	term.keys("C-c")
	term.waitFor("What should it do instead?")
	term.keys(words, "Enter")
	term.waitFor("FLOWER-EXIT=0")
	reqs := bed.Model.RequestsFor(conv)
	return reqs[len(reqs)-1], term
}
