//go:build unix

package hooks

import (
	"errors"
	"syscall"
	"time"
)

// sendLine sends line over a non-blocking Unix stream socket: connect and
// write either complete at once or fail (EAGAIN when the listener's backlog
// or buffer is full), so nothing here ever waits and timeout is not needed.
// It uses syscall rather than package net: net's initialisation and size
// cost flower-hook start-up time on every tool call.
func sendLine(path string, line []byte, _ time.Duration) error {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	syscall.CloseOnExec(fd)
	if err := syscall.SetNonblock(fd, true); err != nil {
		return err
	}
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		return err
	}
	for len(line) > 0 {
		n, err := syscall.Write(fd, line)
		if err != nil {
			return err
		}
		if n <= 0 {
			return errors.New("short write")
		}
		line = line[n:]
	}
	return nil
}
