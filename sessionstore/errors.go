package sessionstore

import (
	"errors"
)

// Errors callers can test with errors.Is.
var (
	// ErrNotFound: the session (or key) is not in the store.
	ErrNotFound = errors.New("session not found")
	// ErrBadKey: a key with an empty or unsafe part (path separators, "..").
	ErrBadKey = errors.New("bad session key")
	// ErrNotMirror: Mirror was given a line that is not a transcript_mirror frame,
	// or whose filePath is not under a projects folder.
	ErrNotMirror = errors.New("not a transcript_mirror frame")
)
