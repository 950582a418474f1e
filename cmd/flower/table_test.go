package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestPluralAndTable(t *testing.T) {
	for n, want := range map[int]string{0: "0 turns", 1: "1 turn", 2: "2 turns"} {
		if got := plural(n, "turn"); got != want {
			t.Errorf("plural(%d) = %q", n, got)
		}
	}
	if got := plural(1, "retry|retries") + " " + plural(3, "retry|retries"); got != "1 retry 3 retries" {
		t.Errorf("irregular: %q", got)
	}
	var tb table
	tb.row("STEP", "OK")
	tb.row("确认需求", true)
	tb.row("work", false)
	var buf bytes.Buffer
	tb.write(&buf)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	// The OK column starts at the same display column on every row.
	for _, l := range lines {
		if i := strings.IndexAny(l, "Otf"); displayCol(l[:i]) != 10 {
			t.Errorf("misaligned: %q\n%s", l, buf.String())
		}
	}
	if got := clipWidth("确认需求确认需求", 9); got != "确认需求…" {
		t.Errorf("clipWidth = %q", got)
	}
}
