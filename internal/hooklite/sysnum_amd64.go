//go:build linux

package hooklite

// Linux system calls package syscall has no number for on amd64.
const (
	sysGetrandom   = 318
	sysMemfdCreate = 319
)
