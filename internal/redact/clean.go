package redact

import "sync"

// A Redactor's rules are a pure function of the text they run on, and
// flower runs them on the same text again and again: each line of claude's
// transcript is redacted as it is mirrored into the session store, and the
// transcript file is redacted whole when the step ends, and the transcript
// repeats its largest strings (the system prompt is in each prompt
// snapshot, request shape and request blob). shapeClean remembers, in this
// process, the texts on which the rules found nothing, by their whole
// bytes (no digest: a text counts as seen only if it is byte for byte the
// same), so that the regular expressions run once on each of them. It
// holds no secret: a text is remembered only when no rule found one in it
// and after r's values were replaced (text), and it never leaves memory.

const (
	cleanMin = 256     // shorter texts are checked faster than looked up
	cleanCap = 8 << 20 // bytes remembered at most; then forgotten, all at once
)

var shapeClean struct {
	sync.Mutex
	seen  map[string]struct{}
	bytes int
}

// knownClean reports whether the rules found no secret in b before.
func knownClean(b []byte) bool {
	if len(b) < cleanMin {
		return false
	}
	shapeClean.Lock()
	_, ok := shapeClean.seen[string(b)]
	shapeClean.Unlock()
	return ok
}

// rememberClean records that the rules found no secret in b.
func rememberClean(b []byte) {
	if len(b) < cleanMin || len(b) > cleanCap/4 {
		return
	}
	s := string(b)
	shapeClean.Lock()
	defer shapeClean.Unlock()
	if shapeClean.seen == nil || shapeClean.bytes+len(s) > cleanCap {
		shapeClean.seen, shapeClean.bytes = map[string]struct{}{}, 0
	}
	if _, ok := shapeClean.seen[s]; !ok {
		shapeClean.seen[s] = struct{}{}
		shapeClean.bytes += len(s)
	}
}
