package main

import "path/filepath"
import "strings"
import "testing"
import "time"

import "github.com/flowerhq/flower/internal/testbed"
import "github.com/flowerhq/flower/scripted"

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
	flower := testbed.BuildBinary(t, "./cmd/flower")
	env := append(bed.Env(), "FLOWER_CLAUDE="+bed.Claude, "FLOWER_HOOK="+testbed.BuildBinary(t, "./cmd/flower-hook"))
	term := newTerminal(t, env, bed.Workspace, flower+" --no-self-test --clarify-only --run-dir "+
		filepath.Join(t.TempDir(), "runs")+" 'make a thing'")
	// Wait until the slow request is in flight, then interrupt.
	if !testbed.Eventually(60*time.Second, func() bool { return len(bed.Model.RequestsFor("clarify")) > 0 }) {
		t.Fatalf("the clarifier never called the model:\n%s", term.screen())
	}
	term.keys("C-c")
	term.waitFor("What should it do instead?")
	term.keys("WORDS-FROM-THE-PERSON", "Enter")
	term.waitFor("FLOWER-EXIT=0")

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

// TestE2E_StepHumanInterrupt: the same at a terminal for `flower step`.
func TestE2E_StepHumanInterrupt(t *testing.T) {
	t.Parallel()
	bed := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{
		Name: "main", Replies: []scripted.Reply{{Text: "too slow", DelayMS: 60000}},
		Func: func(scripted.Request) scripted.Reply { return scripted.Reply{Text: "STEP-RESUMED-OK"} },
	}}})
	flower := testbed.BuildBinary(t, "./cmd/flower")
	env := append(bed.Env(), "FLOWER_CLAUDE="+bed.Claude, "FLOWER_HOOK="+testbed.BuildBinary(t, "./cmd/flower-hook"))
	term := newTerminal(t, env, bed.Workspace, flower+" step --run-dir "+filepath.Join(t.TempDir(), "runs")+" 'a long job'")
	if !testbed.Eventually(60*time.Second, func() bool { return len(bed.Model.RequestsFor("main")) > 0 }) {
		t.Fatalf("the step never called the model:\n%s", term.screen())
	}
	term.keys("C-c")
	term.waitFor("What should it do instead?")
	term.keys("STEP-WORDS", "Enter")
	term.waitFor("FLOWER-EXIT=0")
	if !strings.Contains(term.screen(), "STEP-RESUMED-OK") {
		t.Errorf("the resumed step's answer is not on screen:\n%s", term.screen())
	}
	reqs := bed.Model.RequestsFor("main")
	if last := reqs[len(reqs)-1]; !strings.Contains(last.Text(), "STEP-WORDS") || !strings.Contains(last.Messages().Raw, "a long job") {
		t.Errorf("the resumed request lacks the words or the original prompt")
	}
}
