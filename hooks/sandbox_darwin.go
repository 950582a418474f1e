package hooks

import (
	"errors"
	"os"
	"os/exec"
)

// SeatbeltProfile is the sandbox-exec profile of a sandboxed command on
// macOS: everything allowed but file writes, which only reach /dev/null,
// the terminal devices and the private temp folder (parameter TMP).
const SeatbeltProfile = `(version 1)
(allow default)
(deny file-write*)
(allow file-write* (literal "/dev/null") (literal "/dev/dtracehelper") (regex #"^/dev/tty") (subpath (param "TMP")))
`

// execSandbox runs cmd under sandbox-exec with SeatbeltProfile and a
// private temp folder it removes afterwards, and exits with the command's
// code.
func execSandbox(cmd string, o sandboxOptions, getenv func(string) string) error {
	se, err := exec.LookPath("sandbox-exec")
	if err != nil {
		return errors.New("sandbox-exec was not found, so the read-only sandbox cannot run")
	}
	tmp, err := os.MkdirTemp("", "flower-sandbox-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	c := exec.Command(se, "-p", SeatbeltProfile, "-D", "TMP="+tmp, "/bin/bash", "-c", cmd)
	env := sandboxEnv(os.Environ(), o.Scratch, rustupDefault(getenv))
	c.Env = append(env, "TMPDIR="+tmp)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		os.RemoveAll(tmp)
		os.Exit(ee.ExitCode())
	}
	return err
}

// SandboxCheck says whether the read-only sandbox works here: sandbox-exec
// is found.
func SandboxCheck() error {
	if _, err := exec.LookPath("sandbox-exec"); err != nil {
		return errors.New("sandbox-exec was not found (it ships with macOS)")
	}
	return nil
}
