package hooks

import (
	"encoding/binary"
	"fmt"
	"strings"
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

// tiocstiFilter is the seccomp program the sandbox loads instead of a new
// session: a new session keeps a command from pushing keystrokes into the
// caller's terminal (TIOCSTI, TIOCLINUX), and so does refusing those two
// ioctls — at no cost, where setsid costs a new session's kernel work on
// every glance. Another arch, or x32 calls, get EPERM for everything.
// ok is false for a GOARCH it does not know.
func tiocstiFilter(goarch string) (prog []byte, ok bool) {
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
