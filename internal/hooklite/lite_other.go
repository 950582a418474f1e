//go:build !linux || !(amd64 || arm64)

package hooklite

import (
	"os"
	"syscall"
)

// Main execs flower-hook (os.Args[1]) with the rest of the argv: the
// decision server's client (peer credentials, an in-memory stdin) is
// Linux's; elsewhere flower-hook decides each call itself.
func Main() int {
	if len(os.Args) < 3 {
		os.Stderr.WriteString("flower-hook-lite: usage: flower-hook-lite /abs/path/flower-hook GUARD [flags] < hook-input.json; this call is denied to stay safe\n")
		return 2
	}
	err := syscall.Exec(os.Args[1], os.Args[1:], os.Environ())
	os.Stderr.WriteString("flower-hook-lite: exec " + os.Args[1] + ": " + err.Error() + "\n")
	if failClosed(os.Args[2]) {
		return 2
	}
	os.Stdout.WriteString("{}\n")
	return 1
}
