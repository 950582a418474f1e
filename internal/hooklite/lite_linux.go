//go:build linux && (amd64 || arm64)

package hooklite

import (
	"syscall"
	"unsafe"
)

// maxInput is what is read from stdin: flower-hook's own limit plus one
// byte, so that it refuses a larger input as it always did.
const maxInput = 64<<20 + 1

// answerTimeout bounds each send and receive on the socket; a server
// slower than this is skipped for flower-hook (the CLI's hook timeout is
// 30 s).
const answerTimeout = 10

// Main runs flower-hook-lite and returns its exit code (when it does not
// exec flower-hook).
func Main() int {
	argv, ok := cmdline()
	if !ok || len(argv) < 3 || len(argv[1]) == 0 || argv[1][0] != '/' {
		write(2, []byte("flower-hook-lite: usage: flower-hook-lite /abs/path/flower-hook GUARD [flags] < hook-input.json; this call is denied to stay safe\n"))
		return 2
	}
	argv = argv[1:]
	input := readAll(0, maxInput)
	if a, ok := ask(argv, input); ok {
		write(1, a.stdout)
		write(2, a.stderr)
		return a.exit
	}
	return fallback(argv, input)
}

// cmdline is this process's argv, from /proc/self/cmdline (package os,
// whose initialisation costs every start, is not linked).
func cmdline() ([]string, bool) {
	fd, err := syscall.Open("/proc/self/cmdline", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	data := readAll(fd, 1<<20)
	syscall.Close(fd)
	if len(data) == 0 || data[len(data)-1] != 0 {
		return nil, false
	}
	var argv []string
	start := 0
	for i, c := range data {
		if c == 0 {
			argv = append(argv, string(data[start:i]))
			start = i + 1
		}
	}
	return argv, true
}

// readAll reads fd to its end, at most limit bytes.
func readAll(fd, limit int) []byte {
	buf, _ := read(fd, limit, 8<<10, false)
	return buf
}

// readLine reads from fd up to the first newline (not included), at most
// limit bytes; false when the stream ends or fails before one.
func readLine(fd, limit int) ([]byte, bool) {
	return read(fd, limit, 4<<10, true)
}

// read reads fd into a buffer of initial size size, at most limit bytes:
// to its end (line false: what was read, true), or up to the first
// newline (line true: the bytes before it and true; nil and false when
// none came).
func read(fd, limit, size int, line bool) ([]byte, bool) {
	buf := make([]byte, 0, size)
	for len(buf) < limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):min(cap(buf), limit)])
		if err == syscall.EINTR {
			continue
		}
		if n <= 0 || err != nil {
			break
		}
		if line {
			for i, c := range buf[len(buf) : len(buf)+n] {
				if c == '\n' {
					return buf[:len(buf)+i], true
				}
			}
		}
		buf = buf[:len(buf)+n]
	}
	if line {
		return nil, false
	}
	return buf, true
}

// write writes all of b to fd.
func write(fd int, b []byte) {
	for len(b) > 0 {
		n, err := syscall.Write(fd, b)
		if err == syscall.EINTR {
			continue
		}
		if n <= 0 || err != nil {
			return
		}
		b = b[n:]
	}
}

// ask sends the call to the decision server and returns its answer; ok is
// false when there is no server, it is not the process $FLOWER_HOOK_SERVER
// names, or its answer is anything but an answer to this call.
func ask(argv []string, input []byte) (a answer, ok bool) {
	path, ok1 := syscall.Getenv(SocketEnv)
	want, ok2 := atoi(syscall.Getenv(ServerEnv))
	if !ok1 || !ok2 || path == "" || len(input) > MaxForward || !served(argv[1]) {
		return a, false
	}
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return a, false
	}
	defer syscall.Close(fd)
	tv := syscall.Timeval{Sec: answerTimeout}
	if syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv) != nil ||
		syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv) != nil {
		return a, false
	}
	if syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}) != nil {
		return a, false
	}
	// The peer's credentials are the listener's, taken when it listened:
	// a worker that replaced the socket is another pid. Nothing (not the
	// environment) is sent before this holds.
	cred, err := syscall.GetsockoptUcred(fd, syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	if err != nil || int(cred.Pid) != want || int(cred.Uid) != syscall.Getuid() {
		return a, false
	}
	var raw [16]byte
	if n, _, errno := syscall.Syscall(sysGetrandom, uintptr(unsafe.Pointer(&raw[0])), uintptr(len(raw)), 0); errno != 0 || n != uintptr(len(raw)) {
		return a, false
	}
	nonce := appendHex(nil, raw[:])
	if !sendAll(fd, request(nonce, argv, forwarded(), input)) {
		return a, false
	}
	line, ok := readLine(fd, 2*MaxForward)
	if !ok {
		return a, false
	}
	return parseAnswer(line, nonce)
}

// forwarded is this process's ForwardEnv entries that are set.
func forwarded() []string {
	var env []string
	for _, k := range ForwardEnv {
		if v, ok := syscall.Getenv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// served reports whether guard is one the server answers.
func served(guard string) bool {
	for _, g := range Served {
		if g == guard {
			return true
		}
	}
	return false
}

// atoi parses a positive decimal pid.
func atoi(s string, set bool) (int, bool) {
	if !set || s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, n > 0
}

// request is the call's line (see CallPrefix).
func request(nonce []byte, argv, env []string, input []byte) []byte {
	size := len(CallPrefix) + len(nonce) + 8<<10 + 2*len(input)
	for _, s := range argv {
		size += 2*len(s) + 2
	}
	for _, s := range env {
		size += 2*len(s) + 2
	}
	b := make([]byte, 0, size)
	b = append(b, CallPrefix...)
	b = append(b, nonce...)
	b = append(b, `","argv":"`...)
	b = appendJoined(b, argv)
	b = append(b, `","env":"`...)
	b = appendJoined(b, env)
	b = append(b, `","cwd":"`...)
	if wd, err := syscall.Getwd(); err == nil {
		b = appendHex(b, []byte(wd))
	}
	b = append(b, `","input":"`...)
	b = appendHex(b, input)
	return append(b, "\"}\n"...)
}

// appendJoined appends list NUL-joined, as hex.
func appendJoined(b []byte, list []string) []byte {
	for i, s := range list {
		if i > 0 {
			b = append(b, "00"...)
		}
		b = appendHex(b, []byte(s))
	}
	return b
}

// sendAll writes b to the socket fd.
func sendAll(fd int, b []byte) bool {
	for len(b) > 0 {
		n, err := syscall.Write(fd, b)
		if err == syscall.EINTR {
			continue
		}
		if n <= 0 || err != nil {
			return false
		}
		b = b[n:]
	}
	return true
}

// fallback execs flower-hook (argv[0]) with argv, this environment and
// input on stdin (an in-memory file). It returns only when that fails: a
// deny guard then denies, isolate answers {}.
func fallback(argv []string, input []byte) int {
	name := []byte("flower-hook-input\x00")
	if r, _, errno := syscall.Syscall(sysMemfdCreate, uintptr(unsafe.Pointer(&name[0])), 0, 0); errno == 0 {
		fd := int(r)
		if sendAll(fd, input) && fd != 0 {
			if _, err := syscall.Seek(fd, 0, 0); err == nil && syscall.Dup3(fd, 0, 0) == nil {
				syscall.Close(fd)
				err = syscall.Exec(argv[0], argv, syscall.Environ())
				write(2, []byte("flower-hook-lite: exec "+argv[0]+": "+err.Error()+"\n"))
			}
		}
	}
	if failClosed(argv[1]) {
		write(2, []byte("flower-hook "+argv[1]+" gave no decision (flower-hook could not be started), so this call is denied to stay safe.\n"))
		return 2
	}
	write(1, []byte("{}\n"))
	return 1
}
