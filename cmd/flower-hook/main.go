// Command flower-hook is flower's guard binary: Claude Code runs it once per
// tool call as a command hook (`flower-hook GUARD [flags]`, hook input on
// stdin, hook output on stdout). All logic lives in package hooks; see its
// documentation and design.md §3 for the guards, flags and exit codes.
//
// `flower-hook __supervise CLAUDE ARGS…` is the other use: the Runtime
// starts each step's claude under it, the supervisor that kills the step's
// whole tree when flower dies (internal/child.Supervise; on Linux a child
// subreaper, elsewhere the portable mode).
package main

import (
	"os"

	"github.com/flowerhq/flower/hooks"
	"github.com/flowerhq/flower/internal/child"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == child.SuperviseArg {
		os.Exit(child.Supervise(os.Args[2:], os.Stderr))
	}
	os.Exit(hooks.Main(os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}
