//go:build unix

package hooks

import (
	"bytes"
	"errors"
	"syscall"
)

// sendAcked writes line to the Unix socket at path and waits for its
// answer line, each bounded by liveTimeout (SO_SNDTIMEO, SO_RCVTIMEO). It
// uses syscall rather than package net, as sendLine does: net's
// initialisation costs every flower-hook start, and a binary that links it
// pays that on every tool call.
func sendAcked(path string, line []byte) error {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	syscall.CloseOnExec(fd)
	tv := syscall.NsecToTimeval(liveTimeout.Nanoseconds())
	_ = syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv)
	_ = syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		return err
	}
	for out := append(line, '\n'); len(out) > 0; {
		n, err := syscall.Write(fd, out)
		if err != nil {
			return err
		}
		if n <= 0 {
			return errors.New("short write")
		}
		out = out[n:]
	}
	buf := make([]byte, 256)
	for {
		n, err := syscall.Read(fd, buf)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return err
		case n == 0:
			return errors.New("the socket closed before its answer")
		case bytes.IndexByte(buf[:n], '\n') >= 0:
			return nil
		}
	}
}
