//go:build !linux && !darwin

package hooks

import "errors"

// execSandbox has no sandbox to run on this platform.
func execSandbox(string, sandboxOptions, func(string) string) error {
	return errors.New("no read-only sandbox on this platform")
}

// SandboxCheck: there is no read-only sandbox on this platform.
func SandboxCheck() error { return errors.New("no read-only sandbox on this platform") }
