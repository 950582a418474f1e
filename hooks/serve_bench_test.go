package hooks_test

import (
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/flowerhq/flower/hooks"
	"github.com/flowerhq/flower/internal/hooklite"
)

// callLine is the hook call flower-hook-lite sends for argv (flower-hook's
// path first), env and input.
func callLine(argv, env []string, cwd, input string) []byte {
	join := func(l []string) string { return hex.EncodeToString([]byte(strings.Join(l, "\x00"))) }
	return []byte(hooklite.CallPrefix + "0123456789abcdef0123456789abcdef" + `","argv":"` + join(argv) + `","env":"` + join(env) +
		`","cwd":"` + hex.EncodeToString([]byte(cwd)) + `","input":"` + hex.EncodeToString([]byte(input)) + `"}`)
}

// BenchmarkAnswer is the decision server's share of a flower-hook-lite
// call (delegate on a Bash call, no report socket).
func BenchmarkAnswer(b *testing.B) {
	line := callLine([]string{"/bin/flower-hook", hooks.GuardDelegate}, os.Environ(), "/tmp", benchInput)
	for b.Loop() {
		if out := hooks.Answer(line, ""); !strings.Contains(string(out), `"exit":0`) {
			b.Fatalf("%s", out)
		}
	}
}
