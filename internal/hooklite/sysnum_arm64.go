//go:build linux

package hooklite

import "syscall"

// The numbers lite_linux.go calls by (named alike on amd64).
const (
	sysGetrandom   = syscall.SYS_GETRANDOM
	sysMemfdCreate = syscall.SYS_MEMFD_CREATE
)
