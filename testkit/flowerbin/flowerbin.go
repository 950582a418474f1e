// Package flowerbin drives the flower binaries in end-to-end tests: it
// builds flower and flower-hook (once per test process, testbed.BuildBinary),
// gives them the environment a step needs, runs them and reads what they
// print, types into them at a tmux terminal, and scripts the scripted model
// for flower's flows (the demo's script, typed goals and verdicts).
//
// The per-command tests in cmd/flower and the product scenarios in
// acceptance/ both use it. Its helpers that build or start something are
// for *_e2e_test.go files only (cmd/flower's and acceptance's structure
// tests hold that); the script helpers are plain values.
package flowerbin

import (
	"os"
	"slices"
	"testing"

	"github.com/flowerhq/flower/internal/selftestmark"
	"github.com/flowerhq/flower/testkit/testbed"
)

// Flower is the flower binary built from this checkout.
func Flower(t testing.TB) string {
	t.Helper()
	return testbed.BuildBinary(t, "./cmd/flower")
}

// Hook is the flower-hook binary built from this checkout (static).
func Hook(t testing.TB) string {
	t.Helper()
	return testbed.BuildBinary(t, "./cmd/flower-hook")
}

// Env is base with what flower needs to run steps (claude at claude and a
// freshly built flower-hook), then extra.
func Env(t testing.TB, base []string, claude string, extra ...string) []string {
	t.Helper()
	return slices.Concat(base, []string{"FLOWER_CLAUDE=" + claude, "FLOWER_HOOK=" + Hook(t)}, extra)
}

// SkipShort skips an end-to-end test that starts no claude but builds and
// runs binaries (why says which): -short is the unit loop, in process only.
func SkipShort(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skip("e2e: -short is the unit loop; " + why)
	}
}

// MarkSelfTested leaves in runDir (created if need be) the mark of a guard
// self-test that claude and this checkout's flower-hook passed
// (internal/selftestmark, the key flower computes), so that a flow there
// does not run the canary claude first. For tests that are not about the
// self-test; the ones about it (doctor, a failing canary, a signal during
// it) run it for real. claude is the path FLOWER_CLAUDE names.
func MarkSelfTested(t testing.TB, runDir, claude string) {
	t.Helper()
	key, err := selftestmark.Key(claude, Hook(t))
	if err == nil {
		if err = os.MkdirAll(runDir, 0o700); err == nil {
			err = selftestmark.Write(runDir, key)
		}
	}
	if err != nil {
		t.Fatalf("marking %s self-tested: %v", runDir, err)
	}
}
