package hooks

import (
	"bytes"
	"encoding/hex"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/flowerhq/flower/internal/hooklite"
)

// LiteBin is flower-hook-lite's file name: the harness calls it for the
// PreToolUse guards it serves (hooklite.Served) when it lies beside
// flower-hook.
const LiteBin = "flower-hook-lite"

// ServerEnv names the pid of the process whose socket ($FLOWER_SOCKET)
// answers hook calls; flower-hook-lite trusts no other peer.
const ServerEnv = hooklite.ServerEnv

// IsCall reports whether a socket line is a hook call from
// flower-hook-lite (and not a report).
func IsCall(line []byte) bool {
	return bytes.HasPrefix(line, []byte(hooklite.CallPrefix))
}

// Served reports whether flower-hook-lite forwards guard to Answer (the
// PreToolUse guards that only decide: hooklite.Served).
func Served(guard string) bool { return slices.Contains(hooklite.Served, guard) }

// call is a hook call line (hooklite.CallPrefix); every field is hex.
type call struct {
	Nonce, Argv, Env, Cwd, Input string
}

// parseCall parses a call line in its one order of fields (hex needs no
// unescaping, so a JSON decoder would only be slower).
func parseCall(line []byte) (c call, ok bool) {
	rest, ok := bytes.CutPrefix(line, []byte(hooklite.CallPrefix))
	fields := []*string{&c.Nonce, &c.Argv, &c.Env, &c.Cwd, &c.Input}
	names := []string{"argv", "env", "cwd", "input"}
	for i, f := range fields {
		var v []byte
		if v, rest, ok = bytes.Cut(rest, []byte{'"'}); !ok {
			return c, false
		}
		*f = string(v)
		sep := `}`
		if i < len(names) {
			sep = `,"` + names[i] + `":"`
		}
		if rest, ok = bytes.CutPrefix(rest, []byte(sep)); !ok {
			return c, false
		}
	}
	return c, len(rest) == 0
}

// decline is the answer that sends flower-hook-lite to flower-hook.
var decline = []byte(`{"kind":"hook_answer","decline":true}`)

// Answer decides one hook call from flower-hook-lite in this process, as
// `flower-hook GUARD [flags]` would in the hook's (same guard code, with
// the hook's environment, working folder and flower-hook path), and
// returns the answer line: exit code, stdout and stderr. The decision's
// report line goes to deliver (the socket's own report handling, not a
// path the caller names; nil: dropped). Only the guards of hooklite.Served are answered, and
// they only decide (no file is written but the sandbox's seccomp filter,
// under this process's cache folder); anything else, or a call that does
// not parse, is declined and flower-hook decides. The line is never kept:
// its environment may hold secrets.
func Answer(line []byte, deliver func(report []byte)) (reply []byte) {
	// A guard's panic is run's to answer; anything else that panics here
	// must not take the flower process down: flower-hook decides instead.
	defer func() {
		if recover() != nil {
			reply = decline
		}
	}()
	c, ok := parseCall(line)
	if !ok || len(c.Nonce) != 32 || !isLowerHex(c.Nonce) {
		return decline
	}
	argv, ok1 := unhexList(c.Argv)
	env, ok2 := unhexList(c.Env)
	cwd, err1 := hex.DecodeString(c.Cwd)
	input, err2 := hex.DecodeString(c.Input)
	if !ok1 || !ok2 || err1 != nil || err2 != nil || len(argv) < 2 || !filepath.IsAbs(argv[0]) || !Served(argv[1]) {
		return decline
	}
	if env == nil {
		env = []string{} // not nil: nil is this process's environment
	}
	if deliver == nil {
		deliver = func([]byte) {}
	}
	getenv := func(k string) string {
		if k == SocketEnv {
			return "" // the report goes to deliver
		}
		return lookupEnv(env, k)
	}
	var stdout, stderr bytes.Buffer
	code := run(argv[1:], bytes.NewReader(input), &stdout, &stderr, host{getenv: getenv, environ: env, self: argv[0], cwd: string(cwd), deliver: deliver})
	out := make([]byte, 0, 96+2*(stdout.Len()+stderr.Len()))
	out = append(out, hooklite.AnswerPrefix...)
	out = append(out, c.Nonce...)
	out = append(out, `","exit":`...)
	out = strconv.AppendInt(out, int64(code&0xff), 10)
	out = append(out, `,"stdout":"`...)
	out = hex.AppendEncode(out, stdout.Bytes())
	out = append(out, `","stderr":"`...)
	out = hex.AppendEncode(out, stderr.Bytes())
	return append(out, `"}`...)
}

// isLowerHex reports whether s is lower-case hex.
func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// unhexList decodes a hex, NUL-joined list (empty: none).
func unhexList(s string) ([]string, bool) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, false
	}
	if len(b) == 0 {
		return nil, true
	}
	var list []string
	for part := range bytes.SplitSeq(b, []byte{0}) {
		list = append(list, string(part))
	}
	return list, true
}

// lookupEnv is k's value in env (KEY=value entries, the first wins, as
// the hook's own getenv).
func lookupEnv(env []string, k string) string {
	for _, kv := range env {
		if len(kv) > len(k) && kv[len(k)] == '=' && kv[:len(k)] == k {
			return kv[len(k)+1:]
		}
	}
	return ""
}
