package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/internal/pinned"
)

// TestDoctor_ReportsTheSelfTest: `flower doctor` runs the factory's guard
// self-test with the claude and flower-hook it found and reports its
// verdict as the self-test check; a failure fails doctor (exit 1). The
// passing self-test is the control.
func TestDoctor_ReportsTheSelfTest(t *testing.T) {
	dir := t.TempDir()
	claude, hook := filepath.Join(dir, "claude"), filepath.Join(dir, "flower-hook")
	if err := os.WriteFile(claude, []byte("#!/bin/sh\necho '"+pinned.ClaudeVersion+" (Claude Code)'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hook, []byte("#!/bin/sh\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		err    error
		status string
	}{
		{"failure", errors.New("flower: guard self-test failed: the subagent's Bash did not run"), "fail"},
		{"control: passed", nil, "ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, out, errb := testEnv("")
			var tested []string
			e.SelfTest = func(_ context.Context, c, h string) error { tested = append(tested, c, h); return tc.err }
			code := run(context.Background(), e, []string{"flower", "doctor", "--json", "-C", t.TempDir(), "--claude", claude, "--hook", hook})
			var st gjson.Result
			for _, c := range gjson.Get(out.String(), "checks").Array() {
				if c.Get("name").String() == "self-test" {
					st = c
				}
			}
			if !slices.Equal(tested, []string{claude, hook}) || st.Get("status").String() != tc.status {
				t.Fatalf("self-tested %v; self-test check %s (exit %d, stderr %q)", tested, st.Raw, code, errb)
			}
			if tc.err != nil && (code != exitFailed || st.Get("detail").String() != tc.err.Error()) {
				t.Errorf("exit %d, detail %s", code, st.Get("detail"))
			}
		})
	}
}
