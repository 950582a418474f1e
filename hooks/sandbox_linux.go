package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// execSandbox replaces flower-hook with bwrap running cmd (bwrapArgs): the
// exit code, output and signals are then bwrap's, which are the command's.
// Descriptors above 2 are closed on exec, so the sandbox inherits no
// writable file but its output.
func execSandbox(cmd string, o sandboxOptions, getenv func(string) string) error {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return errors.New("bubblewrap (bwrap) is not installed, so the read-only sandbox cannot run: " + bwrapInstallHint)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		return errors.New("no bash on PATH")
	}
	o.Bwrap, o.Bash = bwrap, bash
	if o.Dir, err = os.Getwd(); err != nil {
		return err
	}
	closeOnExec()
	argv := append([]string{"bwrap"}, bwrapArgs(cmd, o)...)
	return syscall.Exec(bwrap, argv, sandboxEnv(os.Environ(), o.Scratch, rustupDefault(getenv)))
}

// closeOnExec marks every descriptor above stderr close-on-exec.
func closeOnExec() {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}

// SandboxCheck says whether the read-only sandbox works here: bwrap and
// bash are found and a probe (the sandbox running true) succeeds; the error
// names the install line.
func SandboxCheck() error {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return errors.New("bubblewrap (bwrap) was not found: install it: " + bwrapInstallHint)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		return errors.New("no bash on PATH for the read-only sandbox")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bwrap, bwrapArgs("true", sandboxOptions{Bash: bash})...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("bubblewrap (%s) cannot make the read-only sandbox here (%v: %s); it needs user namespaces or a setuid bwrap",
			bwrap, err, strings.TrimSpace(string(out)))
	}
	return nil
}
