//go:build !unix

package hooks

import (
	"net"
	"time"
)

// sendLine sends line to the Unix socket at path within timeout.
func sendLine(path string, line []byte, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	conn, err := net.DialTimeout("unix", path, timeout)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.SetWriteDeadline(deadline); err != nil {
		return err
	}
	_, err = conn.Write(line)
	return err
}
