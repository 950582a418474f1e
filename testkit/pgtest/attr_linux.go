package pgtest

import (
	"syscall"
)

// serverAttr runs the server as cred in its own process group; SIGQUIT
// (immediate shutdown of the server and its backends) comes if the test
// binary dies without calling stop.
func serverAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT, Setpgid: true}
}
