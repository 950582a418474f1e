package harness

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/flowerhq/flower/hooks"
)

// The decision server: the step's PreToolUse deny guards (delegate,
// whitelist, fence) and isolate run as flower-hook-lite, a binary that
// links only syscall, which forwards each call over the report socket to
// this process; hooks.Answer decides it with the same guard code as
// flower-hook. flower-hook-lite trusts the answer only when the socket's
// peer is this process (FLOWER_HOOK_SERVER, checked with SO_PEERCRED), and
// otherwise execs flower-hook, which decides as before
// (docs/performance.md, "flower-hook's start").

// answerHookCall answers line when it is a hook call (ok); the decision's
// report line goes to handle, as if flower-hook had sent it. The call line
// itself is never logged or stored.
func answerHookCall(line []byte, handle func(line []byte)) (reply []byte, ok bool) {
	if !hooks.IsCall(line) {
		return nil, false
	}
	return hooks.Answer(line, handle), true
}

// hookServerPID is the value of hooks.ServerEnv in a step's environment:
// this process, which listens on its FLOWER_SOCKET.
func hookServerPID() string { return strconv.Itoa(os.Getpid()) }

// liteBeside returns flower-hook-lite's path when it lies beside hookPath
// (an executable file) on a system whose flower-hook-lite asks this
// process (Linux on amd64 or arm64); "" otherwise, and the guards call
// flower-hook itself.
func liteBeside(hookPath string) string {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" || !filepath.IsAbs(hookPath) {
		return ""
	}
	p := filepath.Join(filepath.Dir(hookPath), hooks.LiteBin)
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return ""
	}
	return p
}

// servedCmd is the shell words that run guard args[0] of hookPath:
// flower-hook-lite in front of flower-hook for a served guard when it is
// installed, else flower-hook.
func servedCmd(hookPath string, args []string) string {
	if lite := liteBeside(hookPath); lite != "" && len(args) > 0 && hooks.Served(args[0]) {
		return shellQuote(lite) + " " + shellQuote(hookPath)
	}
	return shellQuote(hookPath)
}
