// Command flower-hook-lite is the lean front of flower-hook's PreToolUse
// guards: `flower-hook-lite /abs/flower-hook GUARD [flags]` asks the
// flower process that runs the step (over $FLOWER_SOCKET, only if its peer
// is $FLOWER_HOOK_SERVER) and prints its answer, else execs flower-hook,
// which decides as always. All logic lives in internal/hooklite.
package main

import (
	"syscall"

	"github.com/flowerhq/flower/internal/hooklite"
)

func main() {
	syscall.Exit(hooklite.Main())
}
