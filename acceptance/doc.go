// Package acceptance holds flower's product scenarios: end-to-end tests that
// drive the built flower and flower-hook binaries and the pinned claude
// against the scripted model across commands — a whole flow under the write
// fence or the sandbox, what a run records, secrets kept off disk, a flow
// resumed on another machine, the guards a workspace cannot switch off.
// Each file holds one scenario and is named for it (structure_test.go lists
// them); the tests of one command stay beside it in cmd/flower. The shared
// helpers are in testkit/flowerbin and testkit/testbed. Nothing here runs
// under -short.
package acceptance
