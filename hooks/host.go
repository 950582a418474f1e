package hooks

import (
	"encoding/json"
	"errors"
	"os"
)

// host is where a guard's call came from: the hook process's environment
// and flower-hook's path. Run's is this process; Answer's the
// flower-hook-lite that forwarded the call.
type host struct {
	getenv func(string) string
	// environ is the hook's environment (nil: this process's).
	environ []string
	// self is flower-hook's path ("": this executable).
	self string
	// cwd is the hook's working folder (with environ).
	cwd string
	// deliver, when set, takes the report line (no newline) instead of
	// $FLOWER_SOCKET: the decision server is the socket's own process.
	deliver func(line []byte)
}

// report sends r to $FLOWER_SOCKET (best-effort, bounded by
// reportTimeout), or hands it to deliver.
func (h host) report(r Report) {
	if h.deliver == nil {
		_ = sendReport(h.getenv(SocketEnv), r, reportTimeout)
		return
	}
	if line, ok := marshalReport(r); ok {
		h.deliver(line)
	} else if line, err := json.Marshal(r); err == nil {
		h.deliver(line)
	}
}

// homeDir is the hook's home folder (os.UserHomeDir's rule on Unix:
// $HOME, which must be set).
func (h host) homeDir() (string, error) {
	if h.environ == nil {
		return os.UserHomeDir()
	}
	if home := h.getenv("HOME"); home != "" {
		return home, nil
	}
	return "", errors.New("$HOME is not defined")
}

// repoEnv is what gitRunsRepoPrograms reads the repository's config
// with: the hook's working folder and environment (this process's for
// flower-hook, whatever getenv a caller of Run passed).
func (h host) repoEnv() (cwd string, getenv func(string) string) {
	if h.environ == nil {
		cwd, _ = os.Getwd()
		return cwd, os.Getenv
	}
	return h.cwd, h.getenv
}
