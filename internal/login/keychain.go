package login

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os/exec"
	"os/user"
	"regexp"
	"strings"
	"time"
)

// Keychain is the macOS Keychain entry Claude Code keeps a login in, read
// with `security find-generic-password -a ACCOUNT -w -s SERVICE` (the
// arguments claude itself uses). It is no build-tagged code: it runs
// wherever a `security` program is, so tests on Linux drive it with a fake
// one on PATH; only the selector that puts it into Sources is darwin's.
type Keychain struct {
	// Security is the program ("" is "security", looked up on PATH).
	Security string
	// Service and Account name the entry (see KeychainFor).
	Service, Account string
}

// notFound is security's exit code for "The specified item could not be
// found in the keychain."
const notFound = 44

// keychainTimeout bounds one security call (claude allows it 10 s; a
// locked keychain that prompts must not hang flower).
const keychainTimeout = 10 * time.Second

// Read returns the entry's secret (the login JSON); no entry is no login.
func (k Keychain) Read() ([]byte, error) {
	prog := k.Security
	if prog == "" {
		prog = "security"
	}
	ctx, cancel := context.WithTimeout(context.Background(), keychainTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, prog, "find-generic-password", "-a", k.Account, "-w", "-s", k.Service).Output()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == notFound:
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("login: %s find-generic-password -s %q: %w", prog, k.Service, err)
	}
	return []byte(strings.TrimSpace(string(out))), nil
}

// Where names the entry.
func (k Keychain) Where() string { return "the Keychain entry " + k.Service }

// safeAccount is the account names claude uses as they are.
var safeAccount = regexp.MustCompile(`^[a-zA-Z0-9._-]+$`)

// KeychainFor is the entry claude 2.1 keeps the login of configDir in:
// service "Claude Code-credentials", with "-" and the first 8 hex digits of
// the SHA-256 of the config dir appended when CLAUDE_CONFIG_DIR is set
// (a non-empty CLAUDE_SECURESTORAGE_CONFIG_DIR replaces that dir); account $USER (else the login name), or
// "claude-code-user" when that has other characters.
func KeychainFor(configDir string, getenv func(string) string) Keychain {
	service := "Claude Code-credentials"
	dir, suffix := configDir, getenv("CLAUDE_CONFIG_DIR") != ""
	if v := getenv("CLAUDE_SECURESTORAGE_CONFIG_DIR"); v != "" {
		dir, suffix = v, true
	}
	if suffix {
		sum := sha256.Sum256([]byte(dir))
		service += "-" + hex.EncodeToString(sum[:])[:8]
	}
	account := getenv("USER")
	if account == "" {
		if u, err := user.Current(); err == nil {
			account = u.Username
		}
	}
	if !safeAccount.MatchString(account) {
		account = "claude-code-user"
	}
	return Keychain{Service: service, Account: account}
}

// darwinSources is where claude keeps a login on macOS: the Keychain entry
// first (where it writes one, and reads first), then the file (its
// fallback). Untagged, so that tests on Linux run it.
func darwinSources(configDir string, getenv func(string) string) []Source {
	return []Source{KeychainFor(configDir, getenv), File{Dir: configDir}}
}
