package child

import "syscall"

// setDeathSignal asks the kernel to SIGKILL the child when flower dies.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
