// Package selftestmark is the mark a passed guard self-test leaves in a run
// dir: selftest.ok holding a key of the claude and flower-hook that passed
// it (each one's path, size and modification time). flower skips the
// self-test in a run dir whose mark holds the key of the binaries it would
// use now; a new claude or flower-hook has another key, so it is tested
// again. The end-to-end tests that are not about the self-test write the
// mark the same way before their first flow (testkit/flowerbin), so that
// each of them does not pay for a canary claude.
//
// A leaf: it imports nothing of ours.
package selftestmark

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// File is the mark's name in a run dir.
const File = "selftest.ok"

// Key identifies the claude and flower-hook at these (resolved) paths.
func Key(claude, hook string) (string, error) {
	h := sha256.New()
	for _, p := range []string{claude, hook} {
		st, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s|%d|%d\n", p, st.Size(), st.ModTime().UnixNano())
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Holds reports whether runDir's mark holds key.
func Holds(runDir, key string) bool {
	b, err := os.ReadFile(filepath.Join(runDir, File))
	return err == nil && strings.TrimSpace(string(b)) == key
}

// Write leaves the mark with key in the (existing) runDir, private to its
// owner.
func Write(runDir, key string) error {
	return os.WriteFile(filepath.Join(runDir, File), []byte(key+"\n"), 0o600)
}
