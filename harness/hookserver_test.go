package harness

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/flowerhq/flower/hooks"
)

// TestServedCmd: with flower-hook-lite beside flower-hook (Linux), the
// served guards' commands put it in front; spill, index and live call
// flower-hook itself; without it (control) every command is flower-hook.
func TestServedCmd(t *testing.T) {
	dir := t.TempDir()
	hook := filepath.Join(dir, "flower-hook")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := servedCmd(hook, []string{hooks.GuardDelegate}); got != shellQuote(hook) {
		t.Errorf("control: no flower-hook-lite, got %q", got)
	}
	lite := filepath.Join(dir, hooks.LiteBin)
	if err := os.WriteFile(lite, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := servedCmd(hook, []string{hooks.GuardDelegate}); got != shellQuote(hook) {
		t.Errorf("a non-executable flower-hook-lite is used: %q", got)
	}
	if err := os.Chmod(lite, 0o755); err != nil {
		t.Fatal(err)
	}
	onLinux := runtime.GOOS == "linux" && (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64")
	for _, g := range []string{hooks.GuardDelegate, hooks.GuardWhitelist, hooks.GuardFence, hooks.GuardIsolate} {
		want := shellQuote(hook)
		if onLinux {
			want = shellQuote(lite) + " " + shellQuote(hook)
		}
		if got := servedCmd(hook, []string{g}); got != want {
			t.Errorf("%s: %q, want %q", g, got, want)
		}
	}
	for _, g := range []string{hooks.GuardSpill, hooks.GuardIndex, hooks.GuardLive} {
		if got := servedCmd(hook, []string{g}); got != shellQuote(hook) {
			t.Errorf("%s goes through flower-hook-lite: %q", g, got)
		}
	}
	if got := denyHookCmd(hook, hooks.GuardDelegate).Command; onLinux && !strings.Contains(got, shellQuote(lite)+" "+shellQuote(hook)+" delegate") {
		t.Errorf("the delegate guard's fail-closed command does not run flower-hook-lite: %s", got)
	}
}

// TestAnswerHookCall: the report socket answers a hook call and passes
// every other line on (control).
func TestAnswerHookCall(t *testing.T) {
	if _, ok := answerHookCall([]byte(`{"v":1,"kind":"guard"}`), nil); ok {
		t.Error("a report was taken for a hook call")
	}
	if reply, ok := answerHookCall([]byte(`{"kind":"hook_call","v":1,"nonce":"x"}`), nil); !ok || !strings.Contains(string(reply), "decline") {
		t.Errorf("a malformed hook call: %s %v", reply, ok)
	}
}
