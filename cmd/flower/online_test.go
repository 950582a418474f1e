package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/flowerhq/flower/harness"
)

// The status line says the API is unreachable and when the next probe
// comes, and stops saying it once an online event arrives.
func TestOfflineStatusLine(t *testing.T) {
	next := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	off := harness.Event{Kind: "offline", Data: map[string]any{"host": "127.0.0.1:9", "error": "connection refused",
		"next_probe": next.Format(time.RFC3339Nano)}}
	on := harness.Event{Kind: "online", Data: map[string]any{"host": "127.0.0.1:9"}}
	want := "offline: 127.0.0.1:9 unreachable (connection refused) · next probe " + next.Local().Format("15:04:05")

	var buf bytes.Buffer
	p := newProgress(&buf, liveView(0), 0, false)
	p.event(harness.Event{Kind: "step_start", Step: "work"})
	p.event(off)
	if !strings.HasSuffix(buf.String(), want) {
		t.Fatalf("status line after offline: %q, want it to end in %q", buf.String(), want)
	}
	p.event(on)
	if last := buf.String()[strings.LastIndex(buf.String(), "\r"):]; strings.Contains(last, "offline") {
		t.Errorf("status line after online still says offline: %q", last)
	}

	buf.Reset()
	show := offlineStatus(&buf, false)
	show(harness.Event{Kind: "assistant"}) // the control: other events print nothing
	show(off)
	show(on)
	if got := buf.String(); got != want+"\nonline again: 127.0.0.1:9\n" {
		t.Errorf("step stderr: %q", got)
	}
}
