// Package archtest holds no code: its tests hold the module to its layers
// (imports run cmd → flow → harness → hooks, sessionstore beside harness and
// wired in by the command; libraries link only what they use) and to
// functions a reader can hold. Each test reads the module as it is
// (`go list`, go/ast) and has no lifecycle beyond one test run.
package archtest
