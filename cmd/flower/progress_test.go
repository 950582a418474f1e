package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
)

// The status line shows a told message until the coordinator reads it; a
// pipeline's JSON output stays untouched.
func TestProgressInboxWaiting(t *testing.T) {
	var tty bytes.Buffer
	p := newProgress(&tty, liveView(0), 0, false)
	p.inboxWaiting(1)
	if !strings.Contains(tty.String(), "✉ 1 message(s) waiting") {
		t.Errorf("status line: %q", tty.String())
	}
	tty.Reset()
	p.inboxWaiting(0)
	if strings.Contains(tty.String(), "waiting") {
		t.Errorf("status line still shows the message after it was read: %q", tty.String())
	}
	var js bytes.Buffer
	newProgress(&js, view{json: true}, 0, false).inboxWaiting(1)
	if js.Len() != 0 {
		t.Errorf("JSON output got %q", js.String())
	}
}

// TestTerminalShowsAForgedGoal: a goal file changed on disk is one warning
// line at the terminal, naming the file and the frozen goal the judge keeps;
// the goal being frozen (the control) prints nothing of its own.
func TestTerminalShowsAForgedGoal(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, liveView(0), 0, false)
	p.event(harness.Event{Kind: harness.EventGoal, Step: "设定目标", Data: map[string]any{"state": "frozen", "path": "/ws/.flower/notes/目标.md", "sha256": "aaaaaaaaaaaaaaaa", "text": "x"}})
	if strings.Contains(buf.String(), "目标.md") {
		t.Errorf("freezing the goal printed a line: %q", buf.String())
	}
	p.event(harness.Event{Kind: harness.EventGoal, Step: "执行-评审", Data: map[string]any{"state": "changed", "path": "/ws/.flower/notes/目标.md", "sha256": "aaaaaaaaaaaaaaaa", "disk_sha256": "bbbbbbbbbbbbbbbb"}})
	got := buf.String()
	for _, want := range []string{"⚠", " .flower/notes/目标.md was changed on disk", "bbbbbbbbbbbb", "the judge keeps the frozen goal (sha256 aaaaaaaaaaaa)"} {
		if !strings.Contains(got, want) {
			t.Errorf("warning lacks %q: %q", want, got)
		}
	}
}

// TestTerminalFailedJudgeShowsNoVerdict: a judge run that failed is no
// verdict, so its line carries none, whatever its last text says; the
// control is the same text from a run that finished. The review's mark is
// flower's decision (the verdict event), never the judge's Markdown: a
// Markdown 已达成 decided not_yet shows ○ → not_yet.
func TestTerminalFailedJudgeShowsNoVerdict(t *testing.T) {
	for _, tt := range []struct {
		finished bool
		decided  string
		want     string
	}{{false, flow.Achieved, ""}, {true, flow.Achieved, "✓ [0/0] review #1 → achieved"}, {true, flow.NotYet, "○ [0/0] review #1 → not_yet"}} {
		var buf bytes.Buffer
		p := newProgress(&buf, liveView(0), 0, false)
		p.event(harness.Event{Kind: "step_start", Step: "执行-评审#1"})
		p.event(harness.Event{Kind: harness.EventAssistant, Step: "执行-评审#1", Data: map[string]any{"text": "## 结论\n已达成"}})
		p.event(harness.Event{Kind: "step_end", Step: "执行-评审#1", Data: map[string]any{"ok": tt.finished}})
		p.event(harness.Event{Kind: harness.EventVerdict, Step: "执行-评审#1", Data: harness.EventData(flow.TypedVerdict{Verdict: tt.decided})})
		if got := strings.Contains(buf.String(), "→ "); got != tt.finished || !strings.Contains(buf.String(), tt.want) {
			t.Errorf("finished %v, decided %s: %q, want %q", tt.finished, tt.decided, buf.String(), tt.want)
		}
	}
}

// TestSummaryNamesWhyTheGoalWasNotAchieved: rounds that ran out end with
// the verdict's reason (a failed judge's error) in the flow's error and on
// the summary's verdict line.
func TestSummaryNamesWhyTheGoalWasNotAchieved(t *testing.T) {
	fc := flow.Ctx{flow.KeyFailed: flow.WorkStepName, flow.VerdictKey: flow.Verdict{State: flow.NotYet, Reason: "评审这一轮失败了,没有结论,按未达成处理: API Error: 400 JUDGE-BROKE"}}
	o := flowOutcome{Verdict: flow.NotYet}
	o.failedAt(flow.WorkStepName, fc)
	if o.ExitCode != exitFailed || o.OK || !strings.Contains(o.Error, "JUDGE-BROKE") || o.Verdict != flow.NotYet {
		t.Fatalf("outcome = %+v", o)
	}
	var buf bytes.Buffer
	newProgress(&buf, liveView(0), 0, false).finish(o)
	if !strings.Contains(buf.String(), "verdict   not_yet: 评审这一轮失败了") {
		t.Errorf("summary = %q", buf.String())
	}
	// Control: a step that failed by itself (no verdict) says only its own error.
	c := flowOutcome{}
	c.failedAt(flow.ClarifyStepName, flow.Ctx{flow.KeyFailed: flow.ClarifyStepName})
	if c.VerdictReason != "" || strings.Contains(c.Error, "goal not achieved") {
		t.Errorf("clarify failure = %+v", c)
	}
}

func TestWidthPieces(t *testing.T) {
	for _, tc := range []struct {
		s    string
		w    int
		want []string
	}{
		{"/tmp/abc/events.jsonl", 8, []string{"/tmp/abc", "/events.", "jsonl"}},
		{"a/目标.md", 4, []string{"a/目", "标.m", "d"}},
		{"short", 10, []string{"short"}},
	} {
		got := widthPieces(tc.s, tc.w)
		if strings.Join(got, "") != tc.s || !slices.Equal(got, tc.want) {
			t.Errorf("widthPieces(%q, %d) = %q, want %q", tc.s, tc.w, got, tc.want)
		}
	}
}
