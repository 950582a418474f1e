// Command flower-hook is flower's guard binary: Claude Code runs it once per
// tool call as a command hook (`flower-hook GUARD [flags]`, hook input on
// stdin, hook output on stdout). All logic lives in package hooks, whose
// documentation lists the guards and their flags. Exit 0 carries the
// decision in the hook output; 2 denies the tool call (the reason on
// stderr), and the deny guards answer every failure of their own with it;
// 1 is a transforming guard that failed, the original input or output
// stands.
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
	os.Exit(hooks.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}
