package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/flowerbin"
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
	if !strings.Contains(term.Screen(), "STEP-RESUMED-OK") {
		t.Errorf("the resumed step's answer is not on screen:\n%s", term.Screen())
	}
	if !strings.Contains(last.Text(), "STEP-WORDS") || !strings.Contains(last.Messages().Raw, "a long job") {
		t.Errorf("the resumed request lacks the words or the original prompt")
	}
}

// interruptAt runs `flower FLAGS --run-dir DIR PROMPT` at a terminal over
// bed, types Ctrl-C once conversation conv's request is in flight, answers
// flower's question with words and waits for flower to exit 0. It returns
// conv's last request (the resumed one) and the terminal.
func interruptAt(t *testing.T, bed *testbed.Bed, conv, words, flags, prompt string) (scripted.Request, *flowerbin.Terminal) {
	t.Helper()
	flower := testbed.BuildBinary(t, "./cmd/flower")
	env := flowerbin.Env(t, bed.Env(), bed.Claude)
	term := flowerbin.NewTerminal(t, env, bed.Workspace, flower+" "+flags+" --run-dir "+filepath.Join(t.TempDir(), "runs")+" "+prompt)
	if !testbed.Eventually(testbed.Left(t), func() bool { return len(bed.Model.RequestsFor(conv)) > 0 }) {
		t.Fatalf("conversation %s never called the model:\n%s", conv, term.Screen())
	}
	term.Keys("C-c")
	term.WaitFor("What should it do instead?")
	term.Keys(words, "Enter")
	term.WaitFor("FLOWER-EXIT=0")
	reqs := bed.Model.RequestsFor(conv)
	return reqs[len(reqs)-1], term
}

// TestE2E_InterruptAfterQuestion types into a real terminal: the clarifier
// asks a question, the person answers it, then presses Ctrl-C while the next
// model call is in flight and types words. The words reach the interrupt
// prompt (one reader of the terminal) and appear in the resumed request —
// not as an answer to a question. Then an empty line at a second interrupt
// prompt resumes without words, and flower says so.
func TestE2E_InterruptAfterQuestion(t *testing.T) {
	t.Parallel()
	const brief = "## 目标\nx\n## 验收标准\ny\n## 边界\nz\n## 未知与假设\nw"
	var inFlight atomic.Int32
	bed := testbed.New(t, &scripted.Script{Conversations: []scripted.Conversation{{
		Name: "clarify", Match: scripted.Match{System: "你是需求澄清者"},
		Func: func(r scripted.Request) scripted.Reply {
			lu := r.LastUser()
			switch {
			case strings.Contains(lu, "WORDS-AFTER-ANSWER"):
				return scripted.Reply{Text: brief}
			case strings.Contains(lu, "ANSWER-ONE"):
				inFlight.Add(1)
				return scripted.Reply{Text: "too slow", DelayMS: 150000}
			}
			return flowerbin.Tool("mcp__flower__ask", map[string]any{"question": "QUESTION-ONE: which greeting?"})
		},
	}}})
	flower := testbed.BuildBinary(t, "./cmd/flower")
	env := flowerbin.Env(t, bed.Env(), bed.Claude)
	term := flowerbin.NewTerminal(t, env, bed.Workspace, flower+" --no-self-test --clarify-only --run-dir "+
		filepath.Join(t.TempDir(), "runs")+" 'make a thing'")
	term.WaitFor("QUESTION-ONE")
	term.TypeLine("ANSWER-ONE")
	// The slow request after the answer is in flight.
	if !testbed.Eventually(testbed.Left(t), func() bool { return anyCarries(bed.Model.RequestsFor("clarify"), "ANSWER-ONE") }) {
		t.Fatalf("the answer never reached the model:\n%s", term.Screen())
	}
	// First Ctrl-C: an empty line resumes without words.
	term.Keys("C-c")
	term.WaitFor("What should it do instead?")
	term.Keys("Enter")
	term.WaitFor("no words: the step goes on as it was")
	// Second interrupt: words.
	term.Keys("C-c")
	if !testbed.Eventually(testbed.Left(t), func() bool { return strings.Count(term.Screen(), "What should it do instead?") >= 2 }) {
		t.Fatalf("the second interrupt prompt never came:\n%s", term.Screen())
	}
	term.TypeLine("WORDS-AFTER-ANSWER")
	term.WaitFor("FLOWER-EXIT=0")

	reqs := bed.Model.RequestsFor("clarify")
	last := reqs[len(reqs)-1]
	if !strings.Contains(last.LastUser(), "WORDS-AFTER-ANSWER") {
		t.Fatalf("the resumed request does not carry the words:\n%.1500s", last.LastUser())
	}
	for _, tr := range last.AllToolResults() {
		if strings.Contains(tr.Content, "WORDS-AFTER-ANSWER") {
			t.Errorf("the words came back as an answer to a question: %q", tr.Content)
		}
	}
	if !anyCarries(reqs, "ANSWER-ONE") {
		t.Error("control: the answer itself never reached the model")
	}
	log, _ := os.ReadFile(filepath.Join(bed.Workspace, ".flower", "notes", "问答记录.md"))
	if !strings.Contains(string(log), "ANSWER-ONE") || strings.Contains(string(log), "WORDS-AFTER-ANSWER") {
		t.Errorf("Q&A log must hold the answer and not the interrupt words:\n%s", log)
	}
	if n := inFlight.Load(); n != 1 {
		t.Errorf("slow requests = %d: the empty line must not restart the step", n)
	}
}

// anyCarries reports whether some request's tool results carry s.
func anyCarries(reqs []scripted.Request, s string) bool {
	for _, r := range reqs {
		for _, tr := range r.AllToolResults() {
			if strings.Contains(tr.Content, s) {
				return true
			}
		}
	}
	return false
}
