package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flowerhq/flower/scripted"
	"github.com/flowerhq/flower/testkit/testbed"
)

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
			return demoTool("mcp__flower__ask", map[string]any{"question": "QUESTION-ONE: which greeting?"})
		},
	}}})
	flower := testbed.BuildBinary(t, "./cmd/flower")
	env := flowerEnv(t, bed.Env(), bed.Claude)
	term := newTerminal(t, env, bed.Workspace, flower+" --no-self-test --clarify-only --run-dir "+
		filepath.Join(t.TempDir(), "runs")+" 'make a thing'")
	term.waitFor("QUESTION-ONE")
	term.typeLine("ANSWER-ONE")
	// The slow request after the answer is in flight.
	if !testbed.Eventually(60*time.Second, func() bool { return anyCarries(bed.Model.RequestsFor("clarify"), "ANSWER-ONE") }) {
		t.Fatalf("the answer never reached the model:\n%s", term.screen())
	}
	// First Ctrl-C: an empty line resumes without words.
	term.keys("C-c")
	term.waitFor("What should it do instead?")
	term.keys("Enter")
	term.waitFor("no words: the step goes on as it was")
	// Second interrupt: words.
	term.keys("C-c")
	if !testbed.Eventually(30*time.Second, func() bool { return strings.Count(term.screen(), "What should it do instead?") >= 2 }) {
		t.Fatalf("the second interrupt prompt never came:\n%s", term.screen())
	}
	term.typeLine("WORDS-AFTER-ANSWER")
	term.waitFor("FLOWER-EXIT=0")

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
