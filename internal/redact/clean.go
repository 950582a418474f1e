package redact

import (
	"slices"
	"strings"
	"sync"
	"weak"
)

// flower redacts the same text again and again: each line of claude's
// transcript as it is mirrored into the session store, again at the
// store's boundary, and the transcript file whole when the step ends; and
// the transcript repeats its largest strings (the system prompt is in
// each prompt snapshot, request shape and request blob). Redaction is a
// pure function of the text (and of a Redactor's values), so what is
// found clean once is remembered, in this process, by its whole bytes (no
// digest: a text counts as seen only if it is byte for byte the same):
//
//   - shapeClean: texts in which the rules found no secret (after a
//     Redactor's values were replaced), for every Redactor;
//   - a Redactor's memo (shared by the Redactors with the same values,
//     memoOf): JSON texts (whole inputs, the lines of JSON Lines, and the
//     escaped string literals in them) that its Bytes returns unchanged
//     (no value of its, no secret shape). Only JSON: lines takes a
//     remembered line for a JSON line, which never joins a run of text
//     lines (a private key block), and a line starts with { or [.
//
// A memo holds no secret (only what was found clean) and never leaves
// memory.

const (
	cleanMin = 256     // shorter texts are checked faster than looked up
	cleanCap = 8 << 20 // bytes a memo holds at most; then it forgets, all at once
)

// memo is a bounded set of texts found clean.
type memo struct {
	mu    sync.Mutex
	seen  map[string]struct{}
	bytes int
}

var (
	shapeClean memo // texts the rules found nothing in
	nilClean   memo // what a nil Redactor's Bytes left unchanged
)

// has reports whether b was found clean before.
func (m *memo) has(b []byte) bool {
	if len(b) < cleanMin {
		return false
	}
	m.mu.Lock()
	_, ok := m.seen[string(b)]
	m.mu.Unlock()
	return ok
}

// add records that b was found clean.
func (m *memo) add(b []byte) {
	if len(b) < cleanMin || len(b) > cleanCap/4 {
		return
	}
	s := string(b)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil || m.bytes+len(s) > cleanCap {
		m.seen, m.bytes = map[string]struct{}{}, 0
	}
	if _, ok := m.seen[s]; !ok {
		m.seen[s] = struct{}{}
		m.bytes += len(s)
	}
}

// memos are the Redactors' memos by their values: two Redactors with the
// same values are the same function and share one (a step's Redactor, made
// from the environment flower gives claude, and Process, which the session
// store redacts with, when the two hold the same credentials). The
// pointers are weak: a memo lives as long as a Redactor holds it, so a
// long-lived worker that makes Redactors of many environments keeps the
// memos of the live ones only.
var memos struct {
	sync.Mutex
	by map[string]weak.Pointer[memo]
}

// memoOf is the memo of the Redactors whose values are vals.
func memoOf(vals []string) *memo {
	sorted := slices.Clone(vals)
	slices.Sort(sorted)
	key := strings.Join(sorted, "\x00")
	memos.Lock()
	defer memos.Unlock()
	if m := memos.by[key].Value(); m != nil {
		return m
	}
	for k, p := range memos.by {
		if p.Value() == nil {
			delete(memos.by, k)
		}
	}
	if memos.by == nil {
		memos.by = map[string]weak.Pointer[memo]{}
	}
	m := &memo{}
	memos.by[key] = weak.Make(m)
	return m
}

// clean is the memo of what r's Bytes left unchanged.
func (r *Redactor) clean() *memo {
	if r == nil {
		return &nilClean
	}
	return r.memo
}
