package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"

	"github.com/flowerhq/flower/flow"
	"github.com/flowerhq/flower/harness"
)

// viewEnv is a cmdEnv whose stdout is (or is not) a terminal, with env.
func viewEnv(tty bool, env map[string]string) *cmdEnv {
	e, _, _ := testEnv("")
	e.IsTTY = func(any) bool { return tty }
	e.Getenv = func(k string) string { return env[k] }
	return e
}

// TestViewChoosesByStream: JSON only when asked; at a terminal the status
// line is live and coloured, never with NO_COLOR; piped it is plain; a dumb
// terminal gets ASCII and no redraws; FLOWER_FORCE_TTY=N sets the width.
func TestViewChoosesByStream(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		tty, json                bool
		env                      map[string]string
		wantLive, wantColor, asc bool
		width                    int
	}{
		{"terminal", true, false, nil, true, true, false, 80},
		{"terminal NO_COLOR", true, false, map[string]string{"NO_COLOR": "1"}, true, false, false, 80},
		{"dumb terminal", true, false, map[string]string{"TERM": "dumb"}, false, false, true, 80},
		{"piped", false, false, nil, false, false, false, 0},
		{"piped, forced to 50", false, false, map[string]string{"FLOWER_FORCE_TTY": "50"}, false, false, false, 50},
		{"piped --json", false, true, nil, false, false, false, 0},
	} {
		v := newView(viewEnv(tc.tty, tc.env), tc.json, false)
		if v.json != tc.json || v.live != tc.wantLive || v.color != tc.wantColor || v.ascii != tc.asc || v.width() != tc.width {
			t.Errorf("%s: json %v live %v color %v ascii %v width %d", tc.name, v.json, v.live, v.color, v.ascii, v.width())
		}
	}
}

// TestViewLineFitsTheWidth: a line is clipped by display width (a Chinese
// character counts two), ASCII under TERM=dumb; a short line is left alone
// (the control).
func TestViewLineFitsTheWidth(t *testing.T) {
	v := liveView(20)
	long := "✓ [3/3] 执行-评审#1 · 12 turns · $0.0123"
	for _, room := range []int{0, 1} {
		got := v.line(long, room)
		if w := runewidth.StringWidth(got); w > 20-room || !strings.HasSuffix(got, "…") {
			t.Errorf("room %d: %q is %d columns", room, got, w)
		}
	}
	if got := v.line("✓ short", 1); got != "✓ short" {
		t.Errorf("control: %q", got)
	}
	v.ascii = true
	if got := v.line("✓ a · b → c — d", 0); got != "ok a - b -> c - d" {
		t.Errorf("ascii: %q", got)
	}
	v.color = true
	if got := v.markColor("✗ failed"); got != "\033[31m✗\033[0m failed" {
		t.Errorf("colour: %q", got)
	}
	v.color = false
	if got := v.markColor("✗ failed"); got != "✗ failed" {
		t.Errorf("no colour: %q", got)
	}
}

// TestProgressPipedIsPlain: piped, the human view writes whole lines only
// (no carriage return, no escape), one per step end, and ✓ only marks an
// achieved review; at a terminal the same run redraws (the control).
func TestProgressPipedIsPlain(t *testing.T) {
	run := func(v view) string {
		var buf bytes.Buffer
		p := newProgress(&buf, v, 0, false)
		for i, text := range []string{"## 结论\n未达成\n## 理由\nx", "## 结论\n已达成\n## 理由\ny"} {
			step := []string{"执行-评审#1", "执行-评审#2"}[i]
			p.event(harness.Event{Kind: "step_start", Step: step})
			p.event(harness.Event{Kind: "assistant", Step: step, Data: map[string]any{"text": text}})
			p.event(harness.Event{Kind: "step_end", Step: step, Data: map[string]any{"ok": true}})
			p.event(harness.Event{Kind: harness.EventVerdict, Step: step, Data: harness.EventData(flow.TypedVerdict{Verdict: []string{flow.NotYet, flow.Achieved}[i]})})
		}
		p.finish(flowOutcome{OK: true, Verdict: "achieved"})
		return buf.String()
	}
	piped := run(view{width: func() int { return 0 }})
	if strings.ContainsAny(piped, "\r\033") {
		t.Errorf("piped output redraws: %q", piped)
	}
	lines := strings.Split(strings.TrimSpace(piped), "\n")
	if !strings.HasPrefix(lines[0], "○ [0/0] review #1") || !strings.Contains(lines[0], "→ not_yet") || !strings.HasPrefix(lines[1], "✓ [0/0] review #2") {
		t.Errorf("step lines: %q", lines)
	}
	if live := run(liveView(0)); !strings.Contains(live, "\r\033[K") {
		t.Errorf("control: the terminal view does not redraw: %q", live)
	}
	quiet := run(view{quiet: true, width: func() int { return 0 }})
	if strings.TrimSpace(quiet) != "done — $0.0000 in 0s" {
		t.Errorf("quiet: %q", quiet)
	}
}

// TestViewWrapKeepsEveryWord: text a person must read whole is wrapped, not
// clipped: every word survives and no line is wider than the terminal; a
// line that fits stays one (the control).
func TestViewWrapKeepsEveryWord(t *testing.T) {
	v := liveView(30)
	s := "⚠ goal /ws/.flower/notes/目标.md was changed on disk, the judge keeps the frozen goal"
	lines := v.wrap(s)
	if len(lines) < 3 || strings.Join(strings.Fields(strings.Join(lines, " ")), " ") != s {
		t.Errorf("wrapped: %q", lines)
	}
	for _, l := range lines {
		if runewidth.StringWidth(l) > 30 {
			t.Errorf("%q is wider than 30", l)
		}
	}
	if got := v.wrap("fits"); len(got) != 1 || got[0] != "fits" {
		t.Errorf("control: %q", got)
	}
}

// TestHumanASCII: text for people goes through e.human, which under
// TERM=dumb writes every glyph as ASCII (the error line of a stray word,
// doctor's marks); the control, any other TERM, leaves them alone; a
// terminal wrapped so is still a terminal.
func TestHumanASCII(t *testing.T) {
	const msg = "✓ ok ✗ bad → next — done…\n"
	for _, tc := range []struct {
		term, want string
	}{
		{"dumb", "ok ok x bad -> next - done...\n"},
		{"xterm", msg},
	} {
		e := &cmdEnv{Getenv: func(k string) string { return map[string]string{"TERM": tc.term}[k] }}
		var b strings.Builder
		w := e.human(e.human(&b)) // wrapping twice replaces once
		fmt.Fprint(w, msg)
		if b.String() != tc.want {
			t.Errorf("TERM=%s: %q, want %q", tc.term, b.String(), tc.want)
		}
	}
	if isTTY(asciiWriter{&strings.Builder{}}) {
		t.Error("a builder behind an asciiWriter is no terminal")
	}
}
