package flow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flowerhq/flower/harness"
)

// blockingAnswerer never answers until ctx ends.
type blockingAnswerer struct{}

func (blockingAnswerer) Answer(ctx context.Context, _ Question) (string, bool, error) {
	<-ctx.Done()
	return "", false, ctx.Err()
}

func answers(t *testing.T, lines ...string) *FileAnswers {
	t.Helper()
	fa, err := NewFileAnswers(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return fa
}

func TestHumanChannelAsk(t *testing.T) {
	tests := []struct {
		name     string
		answerer Answerer
		timeout  time.Duration
		maxAsks  int
		asks     int
		want     []string // states
		maxWait  time.Duration
	}{
		{"unattended NoWait (timeout_s=0): at once, no hang", blockingAnswerer{}, NoWait, 0, 2, []string{Timeout, Timeout}, 200 * time.Millisecond},
		{"any negative but WaitForever is unattended", blockingAnswerer{}, -time.Second, 0, 1, []string{Timeout}, 200 * time.Millisecond},
		{"nobody there", nil, time.Hour, 0, 1, []string{Timeout}, 200 * time.Millisecond},
		{"waits up to the timeout", blockingAnswerer{}, 50 * time.Millisecond, 0, 1, []string{Timeout}, 2 * time.Second},
		{"file answers even when unattended", answers(t, "用 Go", "不要"), NoWait, 0, 3, []string{Answered, Answered, Timeout}, 200 * time.Millisecond},
		{"max_asks spent → refused", answers(t, "a", "b"), time.Hour, 1, 2, []string{Answered, Refused}, 200 * time.Millisecond},
		{"empty answer → refused", &FileAnswers{answers: []string{" "}}, time.Hour, 0, 1, []string{Refused}, 200 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "notes", "问答记录.md")
			h := NewHumanChannel(log, "", tt.answerer)
			h.Timeout, h.MaxAsks = tt.timeout, tt.maxAsks
			start := time.Now()
			var got []string
			for i := 0; i < tt.asks; i++ {
				ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
				a, err := h.Ask(ctx, Question{Text: "用什么语言?", Options: []string{"Go", "Rust"}, From: "确认需求"})
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				if a.Text == "" {
					t.Error("an answer without text leaves the model nothing to read")
				}
				got = append(got, a.State)
			}
			if d := time.Since(start); d > tt.maxWait {
				t.Errorf("took %v", d)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("states = %v, want %v", got, tt.want)
			}
			b, err := os.ReadFile(log)
			if err != nil || strings.Count(string(b), "用什么语言?") != tt.asks || !strings.Contains(string(b), "1. Go") {
				t.Errorf("log = %q, %v", b, err)
			}
		})
	}
}

func TestHumanChannelAmendAndInbox(t *testing.T) {
	dir := t.TempDir()
	brief := filepath.Join(dir, "需求.md")
	ParseBrief(fullBrief).Write(brief)
	h := NewHumanChannel("", brief, nil)
	for i, want := range []bool{true, false} {
		wrote, err := h.Amend("还要支持乘法", WakeLabel)
		if err != nil || wrote != want {
			t.Fatalf("amend %d = %v, %v", i, wrote, err)
		}
	}
	b, _ := LoadBrief(brief)
	if !b.Complete() || strings.Count(b.Goal, "还要支持乘法") != 1 || !strings.Contains(b.Goal, "【唤醒时追加】") {
		t.Errorf("brief after amend = %+v", b)
	}
	other := filepath.Join(dir, "notes.txt")
	os.WriteFile(other, []byte("free text\n"), 0o644)
	h.AmendPath = other
	if wrote, err := h.Amend("加一句", "l"); !wrote || err != nil {
		t.Fatal(err)
	}
	if s, _ := os.ReadFile(other); string(s) != "free text\n\n【l】加一句\n" {
		t.Errorf("plain amend = %q", s)
	}
	h.Post("先做加法")
	h.Post("再做减法")
	if m, left := h.takeInbox(); len(m) != 2 || left != 0 {
		t.Errorf("inbox = %v (%d left)", m, left)
	}
	if m, _ := h.takeInbox(); m != nil {
		t.Errorf("inbox taken twice: %v", m)
	}
}

func TestTerminalAnswers(t *testing.T) {
	var out strings.Builder
	ta := &TerminalAnswers{In: strings.NewReader("2\n随便写点\n"), Out: &out}
	q := Question{Text: "选哪个?", Options: []string{"甲", "乙"}}
	for _, want := range []string{"乙", "随便写点"} {
		got, ok, err := ta.Answer(t.Context(), q)
		if err != nil || !ok || got != want {
			t.Errorf("Answer = %q, %v, %v; want %q", got, ok, err, want)
		}
	}
	if _, ok, _ := ta.Answer(t.Context(), q); ok {
		t.Error("closed input must mean nobody answers")
	}
	if !strings.Contains(out.String(), "选哪个?") || !strings.Contains(out.String(), "2. 乙") {
		t.Errorf("terminal output = %q", out.String())
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	blocked := &TerminalAnswers{In: blockingReader{}, Out: io.Discard}
	if _, ok, err := blocked.Answer(ctx, q); ok || err == nil {
		t.Errorf("cancelled ask = %v, %v", ok, err)
	}
}

type blockingReader struct{}

func (blockingReader) Read([]byte) (int, error) { select {} }

// `flower tell`'s path: a published run is found by workspace, the message
// waits in the inbox (the status line is told), the Q&A log records it with
// its time, the inbox call takes it; no running flow is ErrNoFlow.
func TestTell(t *testing.T) {
	runDir, ws := t.TempDir(), t.TempDir()
	log := filepath.Join(t.TempDir(), "问答记录.md")
	if _, err := Tell(t.Context(), runDir, ws, "hi"); !errors.Is(err, ErrNoFlow) {
		t.Fatalf("no flow yet: %v", err)
	}
	h := NewHumanChannel(log, "", nil)
	var waiting []int
	h.OnInbox = func(n int) { waiting = append(waiting, n) }
	if err := h.Open(runDir, "run-1", ws); err != nil {
		t.Fatal(err)
	}
	h.SetStep("执行")
	if st, err := os.Stat(filepath.Join(runDir, "run-1", PointerFile)); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("pointer: %v %v", st, err)
	}
	if _, err := Tell(t.Context(), runDir, t.TempDir(), "hi"); !errors.Is(err, ErrNoFlow) {
		t.Errorf("another workspace found this flow: %v", err)
	}
	r, err := Tell(t.Context(), runDir, ws, "  TELL-MSG 也要支持乘法 ")
	if err != nil || r.Run != "run-1" || r.Step != "执行" {
		t.Fatalf("Tell = %+v, %v", r, err)
	}
	if _, err := Tell(t.Context(), runDir, ws, " "); err == nil {
		t.Error("an empty message was delivered")
	}
	b, _ := os.ReadFile(log)
	if !regexp.MustCompile(`## 留言 \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(执行\)\n\nTELL-MSG 也要支持乘法\n`).Match(b) {
		t.Errorf("Q&A log:\n%s", b)
	}
	if got, _ := h.takeInbox(); !slices.Equal(got, []string{"TELL-MSG 也要支持乘法"}) {
		t.Errorf("inbox = %q", got)
	}
	if !slices.Equal(waiting, []int{1, 0}) {
		t.Errorf("status line told %v, want [1 0]", waiting)
	}
	h.Close()
	if _, err := os.Stat(filepath.Join(runDir, "run-1", PointerFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Error("Close left the pointer")
	}
	// A pointer whose flow died without cleaning up is no running flow.
	os.WriteFile(filepath.Join(runDir, "run-1", PointerFile), []byte(`{"run":"run-1","workspace":"`+ws+`","socket":"/nonexistent/ch.sock"}`), 0o600)
	if _, err := Tell(t.Context(), runDir, ws, "hi"); !errors.Is(err, ErrNoFlow) {
		t.Errorf("stale pointer: %v", err)
	}
}

// TestInboxPages: 150 told messages come over in pages (at most inboxPage
// messages and inboxPageBytes each, one message at least) until none is
// left; every message arrives once, in order, and Waiting counts down.
func TestInboxPages(t *testing.T) {
	h := &HumanChannel{}
	var want []string
	for i := range 150 {
		msg := fmt.Sprintf("message %03d", i)
		if i == 7 {
			msg += strings.Repeat("x", inboxPageBytes) // alone over the byte limit
		}
		want = append(want, msg)
		h.Post(msg)
	}
	var got []string
	for calls := 0; h.Waiting() > 0; calls++ {
		page, left := h.takeInbox()
		size := 0
		for _, m := range page {
			size += len(m)
		}
		if len(page) == 0 || len(page) > inboxPage || len(page) > 1 && size > inboxPageBytes || left != h.Waiting() {
			t.Fatalf("call %d: %d messages, %d bytes, %d left (waiting %d)", calls, len(page), size, left, h.Waiting())
		}
		got = append(got, page...)
		if calls > 150 {
			t.Fatal("the inbox does not drain")
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %d messages, want all %d in order", len(got), len(want))
	}
}

// The channel records each exchange: a told message, its pickup by an
// inbox call (an event per message and one read mark in the Q&A log), and
// a question with its answer. A message never taken gets no read mark (the
// control).
func TestHumanChannelRecords(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "log.md")
	h := NewHumanChannel(logPath, "", answers(t, "2"))
	h.Timeout = NoWait
	var got []harness.Event
	h.OnRecord = func(ev harness.Event) { got = append(got, ev) }
	h.SetStep("执行")
	if _, err := h.Tell("READ-ME 请加测试"); err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(logPath)
	if strings.Contains(string(log), "已读") {
		t.Fatalf("a read mark before any inbox call:\n%s", log)
	}
	if page, _ := h.takeInbox(); len(page) != 1 {
		t.Fatalf("inbox = %v", page)
	}
	h.Ask(t.Context(), Question{Text: "选哪个?", Options: []string{"A", "B"}})
	var lines []string
	for _, ev := range got {
		lines = append(lines, ev.Kind+" "+ev.Step+" "+FlowEventLine(ev))
	}
	want := []string{
		"message 执行 message told in 执行: READ-ME 请加测试",
		"message 执行 message read in 执行: READ-ME 请加测试",
		"question 执行 question in 执行: 选哪个? → [answered] 2",
	}
	if !slices.Equal(lines, want) {
		t.Errorf("records:\n got %q\nwant %q", lines, want)
	}
	log, _ = os.ReadFile(logPath)
	if !regexp.MustCompile(`## 已读 \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(执行\)\n\n> READ-ME 请加测试\n\n\*\*状态\*\*: 协调者已取走`).Match(log) {
		t.Errorf("no read mark in the Q&A log:\n%s", log)
	}
}
