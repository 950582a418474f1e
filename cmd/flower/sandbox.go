package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/flowerhq/flower/harness"
	"github.com/flowerhq/flower/hooks"
)

// Sandbox modes of --sandbox (FLOWER_SANDBOX).
const (
	sandboxAuto    = "auto"    // on where it works, else one warning
	sandboxRequire = "require" // on, or refuse to start
	sandboxOff     = "off"     // the classifier alone
)

// sandboxFlag is --sandbox: whether read-only roles' Bash runs in the
// read-only sandbox.
func sandboxFlag(dst *string) cli.Flag {
	return &cli.StringFlag{Name: "sandbox", Value: sandboxAuto, EnvVars: []string{"FLOWER_SANDBOX"}, Destination: dst,
		Usage: "run the glances of read-only roles in a read-only sandbox (bubblewrap): `MODE` auto (warn once when it cannot), require (refuse to start without it) or off"}
}

// sandboxCheck is the factory's SandboxCheck, hooks.SandboxCheck when unset.
func sandboxCheck(e *cmdEnv) func() error {
	if e.SandboxCheck != nil {
		return e.SandboxCheck
	}
	return hooks.SandboxCheck
}

// applySandbox sets ro.Sandbox for mode: auto turns it on where check
// passes and warns once on stderr where it does not; require refuses to
// start without it, naming the install line; off leaves it off.
func applySandbox(mode string, ro *harness.Options, stderr io.Writer, check func() error) error {
	if check == nil {
		check = hooks.SandboxCheck
	}
	switch mode {
	case sandboxOff:
		return nil
	case sandboxAuto, "":
		if err := check(); err != nil {
			fmt.Fprintf(stderr, "flower: look-only rests on the classifier alone: install bubblewrap (%v)\n", err)
			return nil
		}
	case sandboxRequire:
		if err := check(); err != nil {
			return fmt.Errorf("--sandbox=require: %w", err)
		}
	default:
		return usagef("--sandbox %q: say auto, require or off", mode)
	}
	ro.Sandbox = true
	return nil
}
