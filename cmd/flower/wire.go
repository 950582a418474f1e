package main

import "github.com/flowerhq/flower/harness"
import "github.com/flowerhq/flower/internal/wire"

// runtimeOptions are the seed's Runtime defaults for workspace with what the
// libraries leave to the command wired in: the SQLite session store and the
// credentials copy (see internal/wire).
func runtimeOptions(workspace string) harness.Options {
	o := harness.NewOptions(workspace)
	wire.Defaults(&o)
	return o
}

// guardSelfTest is the canary run of `flower doctor` and of the first step
// in a run dir (wire.GuardSelfTest).
var guardSelfTest = wire.GuardSelfTest
