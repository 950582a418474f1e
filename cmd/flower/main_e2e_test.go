package main

import (
	"slices"
	"testing"

	"github.com/flowerhq/flower/testkit/testbed"
)

// flowerEnv is base with what flower needs to run steps (claude at claude
// and a freshly built flower-hook), then extra.
func flowerEnv(t *testing.T, base []string, claude string, extra ...string) []string {
	t.Helper()
	return slices.Concat(base, []string{"FLOWER_CLAUDE=" + claude, "FLOWER_HOOK=" + testbed.BuildBinary(t, "./cmd/flower-hook")}, extra)
}
