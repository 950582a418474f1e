package hooks

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/flowerhq/flower/internal/atomicfile"
)

// Seccomp (classic BPF) constants for the sandbox's filter.
const (
	bpfLdWAbs  = 0x20 // BPF_LD | BPF_W | BPF_ABS
	bpfJeqK    = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
	bpfJgeK    = 0x35 // BPF_JMP | BPF_JGE | BPF_K
	bpfRetK    = 0x06 // BPF_RET | BPF_K
	retAllow   = 0x7fff0000
	retEPERM   = 0x00050001 // SECCOMP_RET_ERRNO | EPERM
	tiocsti    = 0x5412
	tioclinux  = 0x541c
	x32Syscall = 0x40000000
)

// seccompArch is the audit arch and ioctl number of each GOARCH the filter
// knows.
var seccompArch = map[string][2]uint32{
	"amd64": {0xc000003e, 16},
	"arm64": {0xc00000b7, 29},
}

// TIOCSTIFilter is the seccomp program the sandbox loads instead of a new
// session: a new session keeps a command from pushing keystrokes into the
// caller's terminal (TIOCSTI, TIOCLINUX), and so does refusing those two
// ioctls — at no cost, where setsid costs a new session's kernel work on
// every glance. Another arch, or x32 calls, get EPERM for everything.
// ok is false for a GOARCH it does not know.
func TIOCSTIFilter(goarch string) (prog []byte, ok bool) {
	a, ok := seccompArch[goarch]
	if !ok {
		return nil, false
	}
	type insn struct {
		code   uint16
		jt, jf uint8
		k      uint32
	}
	ins := []insn{
		{bpfLdWAbs, 0, 0, 4},        // 0: arch
		{bpfJeqK, 0, 7, a[0]},       // 1: another arch → deny
		{bpfLdWAbs, 0, 0, 0},        // 2: syscall number
		{bpfJgeK, 5, 0, x32Syscall}, // 3: x32 → deny
		{bpfJeqK, 0, 3, a[1]},       // 4: not ioctl → allow
		{bpfLdWAbs, 0, 0, 24},       // 5: ioctl's request (low 32 bits of args[1])
		{bpfJeqK, 2, 0, tiocsti},    // 6: TIOCSTI → deny
		{bpfJeqK, 1, 0, tioclinux},  // 7: TIOCLINUX → deny, else allow
		{bpfRetK, 0, 0, retAllow},   // 8
		{bpfRetK, 0, 0, retEPERM},   // 9
	}
	for _, in := range ins {
		prog = binary.LittleEndian.AppendUint16(prog, in.code)
		prog = append(prog, in.jt, in.jf)
		prog = binary.LittleEndian.AppendUint32(prog, in.k)
	}
	return prog, true
}

// hexEscaped writes b as \xHH escapes (for printf %b in a single-quoted
// shell word).
func hexEscaped(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		fmt.Fprintf(&sb, `\x%02x`, c)
	}
	return sb.String()
}

// filterFile returns the path of a private file holding prog, under
// cacheDir()/flower (os.UserCacheDir): a file named by prog's hash, made
// once, and checked on every call before it is handed out — a regular file
// (no link), this user's, writable by no one else, in a folder that is
// neither a link nor writable by others, holding exactly prog; anything
// else is replaced (atomically, 0600). A sandboxed command cannot change
// it (the sandbox is read-only); what runs unsandboxed as the same user
// could, as it could change flower-hook itself.
func filterFile(prog []byte, cacheDir func() (string, error)) (string, error) {
	base, err := cacheDir()
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(base) {
		return "", fmt.Errorf("cache folder %q is not absolute", base)
	}
	dir := filepath.Join(base, "flower")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if err := private(dir, true); err != nil {
		return "", err
	}
	// The name only tells filters apart; the content is compared byte for
	// byte below (FNV, not SHA-256: crypto/sha256 costs every hook start).
	path := filepath.Join(dir, "seccomp-"+SpillName(string(prog))+".bpf")
	if private(path, false) == nil {
		if got, err := os.ReadFile(path); err == nil && bytes.Equal(got, prog) {
			return path, nil
		}
	}
	_ = os.Remove(path) // a link or another user's file: rename replaces it anyway
	if err := atomicfile.Write(path, prog, 0o600); err != nil {
		return "", err
	}
	if err := private(path, false); err != nil {
		return "", err
	}
	return path, nil
}

// private says whether path is a real folder (dir) or regular file that
// this user owns and no one else may write.
func private(path string, dir bool) error {
	st, err := os.Lstat(path)
	if err != nil {
		return err
	}
	switch {
	case dir && !st.IsDir(), !dir && !st.Mode().IsRegular():
		return fmt.Errorf("%s is not a real %s", path, map[bool]string{true: "folder", false: "file"}[dir])
	case st.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%s is writable by others (%v)", path, st.Mode().Perm())
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Geteuid() {
		return fmt.Errorf("%s belongs to uid %d", path, sys.Uid)
	}
	return nil
}
