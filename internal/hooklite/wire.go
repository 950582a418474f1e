package hooklite

// The wire of a hook call, shared with hooks.Answer (which decodes the
// request with encoding/json and writes the answer in exactly this form).
// Every variable part is lower-case hex, so neither side escapes anything
// and the answer is parsed here without encoding/json.
const (
	// SocketEnv is the decision server's socket (the report socket).
	SocketEnv = "FLOWER_SOCKET"
	// ServerEnv is the pid of the process that listens on SocketEnv.
	ServerEnv = "FLOWER_HOOK_SERVER"
	// CallPrefix starts a request line; then nonce, argv (NUL-joined),
	// env (the ForwardEnv entries that are set, NUL-joined), working
	// folder and input, each hex in its field:
	// {"kind":"hook_call","v":1,"nonce":"…","argv":"…","env":"…","cwd":"…","input":"…"}
	CallPrefix = `{"kind":"hook_call","v":1,"nonce":"`
	// AnswerPrefix starts an answer line:
	// {"kind":"hook_answer","nonce":"…","exit":N,"stdout":"…","stderr":"…"}
	// Any other line (a decline) makes the client exec flower-hook.
	AnswerPrefix = `{"kind":"hook_answer","nonce":"`
	// MaxForward bounds the input sent over the socket; a larger one goes
	// to flower-hook.
	MaxForward = 1 << 20
)

// ForwardEnv are the environment variables the served guards read (the
// repository's config: GIT_DIR, HOME; the sandbox rewrite: PATH for bwrap
// and bash, RUSTUP_HOME, HOME, GIT_CONFIG_COUNT; fence --project:
// CLAUDE_PROJECT_DIR, FLOWER_ALLOW_DIR); only these cross the socket
// (hooks' TestAnswerReadsOnlyForwardedEnv holds the list).
var ForwardEnv = []string{"PATH", "HOME", "GIT_DIR", "GIT_CONFIG_COUNT", "RUSTUP_HOME", "CLAUDE_PROJECT_DIR", "FLOWER_ALLOW_DIR"}

// Served are the guards the server answers: the PreToolUse deny guards and
// isolate, which only decide. spill and index write files and live
// reports once per step; they keep calling flower-hook itself.
var Served = []string{"delegate", "whitelist", "fence", "isolate"}

// failClosed reports whether guard denies when it cannot decide.
func failClosed(guard string) bool {
	return guard == "delegate" || guard == "whitelist" || guard == "fence"
}

const hexDigits = "0123456789abcdef"

// appendHex appends b as lower-case hex.
func appendHex(dst, b []byte) []byte {
	for _, c := range b {
		dst = append(dst, hexDigits[c>>4], hexDigits[c&15])
	}
	return dst
}

// unhex decodes lower-case hex; ok is false for anything else.
func unhex(s []byte) (out []byte, ok bool) {
	if len(s)%2 != 0 {
		return nil, false
	}
	out = make([]byte, len(s)/2)
	for i := range out {
		hi, lo := nibble(s[2*i]), nibble(s[2*i+1])
		if hi < 0 || lo < 0 {
			return nil, false
		}
		out[i] = byte(hi<<4 | lo)
	}
	return out, true
}

func nibble(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return -1
}

// answer is a parsed answer line.
type answer struct {
	exit           int
	stdout, stderr []byte
}

// parseAnswer parses line (without its newline) as the answer to nonce
// (hex); ok is false for a decline or anything malformed.
func parseAnswer(line, nonce []byte) (a answer, ok bool) {
	rest, ok := cut(line, AnswerPrefix)
	if !ok {
		return a, false
	}
	if rest, ok = cut(rest, string(nonce)); !ok {
		return a, false
	}
	if rest, ok = cut(rest, `","exit":`); !ok {
		return a, false
	}
	n := 0
	for len(rest) > 0 && rest[0] >= '0' && rest[0] <= '9' && n < 256 {
		n = n*10 + int(rest[0]-'0')
		rest = rest[1:]
	}
	if n > 255 {
		return a, false
	}
	a.exit = n
	var field []byte
	if rest, ok = cut(rest, `,"stdout":"`); !ok {
		return a, false
	}
	if field, rest, ok = hexField(rest); !ok {
		return a, false
	}
	if a.stdout, ok = unhex(field); !ok {
		return a, false
	}
	if rest, ok = cut(rest, `,"stderr":"`); !ok {
		return a, false
	}
	if field, rest, ok = hexField(rest); !ok {
		return a, false
	}
	if a.stderr, ok = unhex(field); !ok {
		return a, false
	}
	return a, string(rest) == "}"
}

// cut removes prefix from s.
func cut(s []byte, prefix string) ([]byte, bool) {
	if len(s) < len(prefix) || string(s[:len(prefix)]) != prefix {
		return s, false
	}
	return s[len(prefix):], true
}

// hexField splits s at its first '"': the field before it, the rest after.
func hexField(s []byte) (field, rest []byte, ok bool) {
	for i, c := range s {
		if c == '"' {
			return s[:i], s[i+1:], true
		}
	}
	return nil, s, false
}
