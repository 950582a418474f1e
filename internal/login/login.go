// Package login finds the Claude Code login of a config dir: the
// .credentials.json claude writes on Linux, or the macOS Keychain entry it
// writes there instead (read through `security find-generic-password`, the
// way claude reads it). harness checks with it that a login exists;
// sessionstore copies it into a portable run's config dir.
//
// Lifecycle: stateless. Sources lists where this platform keeps a login
// (a darwin-only selector adds the Keychain); each Source reads on every
// call and caches nothing. A leaf: it imports nothing of ours.
package login

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// CredentialsFile is the login file's name inside a config dir.
const CredentialsFile = ".credentials.json"

// Source is one place a login may be kept.
type Source interface {
	// Read returns the login's JSON, or nil and no error when there is none.
	Read() ([]byte, error)
	// Where names the place, for messages.
	Where() string
}

// File is the login file of a config dir.
type File struct{ Dir string }

// Read returns the file's content; a missing file is no login.
func (f File) Read() ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(f.Dir, CredentialsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// Where is the file's path.
func (f File) Where() string { return filepath.Join(f.Dir, CredentialsFile) }

// Sources lists where this platform keeps the login of configDir, in the
// order claude reads them; getenv is the environment claude runs with.
func Sources(configDir string, getenv func(string) string) []Source {
	return platformSources(configDir, getenv)
}

// Find returns the first login of sources that is a non-empty JSON
// object (nil when none is); an unreadable source is skipped, as claude
// skips it.
func Find(sources []Source) []byte {
	for _, s := range sources {
		data, err := s.Read()
		if err != nil || len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		var v map[string]any
		if json.Unmarshal(data, &v) == nil && len(v) > 0 {
			return data
		}
	}
	return nil
}
