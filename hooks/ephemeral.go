package hooks

import (
	"github.com/flowerhq/flower/glance"
)

// IsEphemeral is glance.IsEphemeral: whether a
// Bash command is a read-only glance that the delegate guard lets a main
// thread run with --glance. The classifier lives in its own leaf package
// because the session store uses it too.
func IsEphemeral(cmd string) bool { return glance.IsEphemeral(cmd) }
