package sessionstore

import (
	"time"
)

// WithClock replaces the store's local clock (tests: a machine whose clock
// is off).
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// TrimPointerFormat is the trim pointer's format, for tests that read a
// pointer back (they match it, not its wording).
const TrimPointerFormat = trimPointerFormat
