package login

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
)

// fakeSecurity puts a `security` on PATH that answers like macOS's: the
// login JSON for exactly the arguments claude passes for service and
// account, exit 44 ("could not be found") for any other entry, exit code
// fail when fail is set. It logs its arguments to the returned file.
func fakeSecurity(t *testing.T, service, account, secret string, fail int) string {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "args")
	script := "#!/bin/sh\nprintf '%s|' \"$@\" >> '" + log + "'\n" +
		"if [ " + strconv.Itoa(fail) + " -ne 0 ]; then echo 'security: SecKeychainSearchCopyNext: boom' >&2; exit " + strconv.Itoa(fail) + "; fi\n" +
		"if [ \"$1|$2|$3|$4|$5|$6\" = 'find-generic-password|-a|" + account + "|-w|-s|" + service + "' ]; then echo '" + secret + "'; exit 0; fi\n" +
		"echo 'security: SecKeychainSearchCopyNext: The specified item could not be found in the keychain.' >&2; exit 44\n"
	if err := os.WriteFile(filepath.Join(dir, "security"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return log
}

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// KeychainFor names the entry as claude 2.1.328 does (service
// "Claude Code-credentials", suffixed by the config dir's hash only when
// CLAUDE_CONFIG_DIR is set; account $USER unless it has odd characters).
func TestKeychainFor(t *testing.T) {
	sum := sha256.Sum256([]byte("/cfg"))
	other := sha256.Sum256([]byte("/secure"))
	tests := []struct {
		name             string
		getenv           func(string) string
		service, account string
	}{
		{"default", env("USER", "alice"), "Claude Code-credentials", "alice"},
		{"CLAUDE_CONFIG_DIR", env("USER", "alice", "CLAUDE_CONFIG_DIR", "/cfg"), "Claude Code-credentials-" + hex.EncodeToString(sum[:])[:8], "alice"},
		{"secure storage dir", env("USER", "alice", "CLAUDE_SECURESTORAGE_CONFIG_DIR", "/secure"), "Claude Code-credentials-" + hex.EncodeToString(other[:])[:8], "alice"},
		{"odd user", env("USER", "a lice"), "Claude Code-credentials", "claude-code-user"},
	}
	for _, tt := range tests {
		k := KeychainFor("/cfg", tt.getenv)
		if k.Service != tt.service || k.Account != tt.account {
			t.Errorf("%s: %+v, want service %q account %q", tt.name, k, tt.service, tt.account)
		}
	}
}

// On macOS a login lives in the Keychain: darwinSources (what the darwin
// selector returns) finds it through `security` on PATH, and falls back to
// the file when the Keychain has no entry. The controls: no entry and no
// file is no login; a failing security is skipped, not trusted.
func TestDarwinSourcesReadTheKeychain(t *testing.T) {
	const secret = `{"claudeAiOauth":{"accessToken":"sk-ant-oat-x","refreshToken":"r"}}`
	getenv := env("USER", "alice")
	t.Run("keychain entry", func(t *testing.T) {
		log := fakeSecurity(t, "Claude Code-credentials", "alice", secret, 0)
		if got := Find(darwinSources(t.TempDir(), getenv)); string(got) != secret {
			t.Errorf("Find = %q, want the Keychain's login", got)
		}
		args, _ := os.ReadFile(log)
		if string(args) != "find-generic-password|-a|alice|-w|-s|Claude Code-credentials|" {
			t.Errorf("security ran with %q", args)
		}
	})
	t.Run("no entry, a file", func(t *testing.T) {
		fakeSecurity(t, "Claude Code-credentials", "bob", secret, 0)
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, CredentialsFile), []byte(`{"k":1}`), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := Find(darwinSources(dir, getenv)); string(got) != `{"k":1}` {
			t.Errorf("Find = %q, want the file's login", got)
		}
	})
	t.Run("control: no entry, no file", func(t *testing.T) {
		fakeSecurity(t, "Claude Code-credentials", "bob", secret, 0)
		if got := Find(darwinSources(t.TempDir(), getenv)); got != nil {
			t.Errorf("Find = %q, want no login", got)
		}
	})
	t.Run("security fails", func(t *testing.T) {
		fakeSecurity(t, "Claude Code-credentials", "alice", secret, 1)
		k := KeychainFor(t.TempDir(), getenv)
		if data, err := k.Read(); err == nil || data != nil {
			t.Errorf("Read = %q, %v; want an error", data, err)
		}
		if got := Find(darwinSources(t.TempDir(), getenv)); got != nil {
			t.Errorf("Find = %q, want no login", got)
		}
	})
}

// Off macOS only the file counts: the same fake Keychain is never asked.
func TestPlatformSources(t *testing.T) {
	if got := Sources("/cfg", env()); len(got) == 0 {
		t.Fatal("no sources")
	}
	if _, ok := Sources("/cfg", env())[0].(Keychain); ok != (runtime.GOOS == "darwin") {
		t.Errorf("first source %T on this platform", Sources("/cfg", env())[0])
	}
}
