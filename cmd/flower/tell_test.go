package main

import (
	"bytes"
	"strings"
	"testing"
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
