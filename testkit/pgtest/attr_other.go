//go:build !linux

package pgtest

import (
	"syscall"
)

// serverAttr runs the server as cred in its own process group. There is no
// Pdeathsig outside Linux: a test binary that crashes leaves the server
// until its temp folder is removed (stop, on a normal exit, still kills it).
func serverAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: true}
}
