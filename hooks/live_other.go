//go:build !unix

package hooks

import (
	"bufio"
	"net"
	"time"
)

// sendAcked writes line to the socket and waits for its answer line.
func sendAcked(path string, line []byte) error {
	c, err := net.DialTimeout("unix", path, liveTimeout)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(liveTimeout))
	if _, err := c.Write(append(line, '\n')); err != nil {
		return err
	}
	_, err = bufio.NewReader(c).ReadString('\n')
	return err
}
