package main

import (
	"github.com/flowerhq/flower/batteries"
	"github.com/flowerhq/flower/harness"
)

// runtimeOptions are the seed's Runtime defaults for workspace with what the
// libraries leave to the command wired in: the SQLite session store and the
// credentials copy (package batteries).
func runtimeOptions(workspace string) harness.Options { return batteries.NewOptions(workspace) }

// guardSelfTest is the canary run of `flower doctor` and of the first step
// in a run dir (GuardSelfTest, selftest.go).
var guardSelfTest = GuardSelfTest
