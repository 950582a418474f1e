package child

import (
	"syscall"
)

// setDeathSignal asks the kernel to SIGKILL the child when flower dies.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// clearDeathSignal takes it back (a supervisor must outlive flower).
func clearDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = 0 }
