package sessionstore

import (
	"errors"
)

// Errors callers can test with errors.Is.
var (
	// ErrNotFound: the session (or key) is not in the store. It also says
	// so to a caller that cannot import this package (the harness, whose
	// SessionStore this is): SessionNotFound() reports true.
	ErrNotFound error = notFound{}
	// ErrBadKey: a key with an empty or unsafe part (path separators, "..").
	ErrBadKey = errors.New("bad session key")
	// ErrNotMirror: Mirror was given a line that is not a transcript_mirror frame,
	// or whose filePath is not under a projects folder.
	ErrNotMirror = errors.New("not a transcript_mirror frame")
)

// notFound is ErrNotFound's type: a behaviour (SessionNotFound), as
// net.Error's Timeout is, for callers that test without this package.
type notFound struct{}

func (notFound) Error() string         { return "session not found" }
func (notFound) SessionNotFound() bool { return true }
