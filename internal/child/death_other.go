//go:build !linux

package child

import (
	"syscall"
)

// setDeathSignal is Linux-only; elsewhere the group signals are all there is.
func setDeathSignal(*syscall.SysProcAttr) {}

// clearDeathSignal has nothing to take back off Linux.
func clearDeathSignal(*syscall.SysProcAttr) {}
