// Package redact keeps credentials out of everything flower writes: the
// values of the credential variables flower knows (Vars) are replaced with
// Mark in events, the session store, the manifest, handoff notes and spill
// files.
//
// Lifecycle: New once per process (or Runtime) from its environment; the
// Redactor is immutable and safe for concurrent use. A nil *Redactor
// changes nothing. Values shorter than MinLen are not secrets worth the
// damage of replacing them in ordinary text, and are left alone.
package redact

import "bytes"
import "sort"
import "strings"

// Mark replaces a secret.
const Mark = "[redacted]"

// MinLen is the shortest value treated as a secret.
const MinLen = 8

// Vars are the environment variables whose values are credentials: the
// ones flower checks (harness.CheckCredentials) and the other API keys and
// tokens the pinned claude reads.
var Vars = []string{
	"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
	"CLAUDE_CODE_OAUTH_REFRESH_TOKEN", "CLAUDE_CODE_SESSION_ACCESS_TOKEN",
	"ANTHROPIC_FOUNDRY_API_KEY", "ANTHROPIC_FOUNDRY_AUTH_TOKEN", "ANTHROPIC_AWS_API_KEY",
	"ANTHROPIC_IDENTITY_TOKEN", "CLAUDE_CODE_GATEWAY_TOKEN",
	"AWS_BEARER_TOKEN_BEDROCK", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
}

// Redactor replaces known secret values.
type Redactor struct {
	values [][]byte // longest first, so a value containing another goes whole
}

// New collects the values of Vars from getenv. It returns nil when there are
// none (nothing to redact).
func New(getenv func(string) string) *Redactor {
	seen := map[string]bool{}
	var vals []string
	for _, k := range Vars {
		v := strings.TrimSpace(getenv(k))
		if len(v) >= MinLen && !seen[v] {
			seen[v] = true
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return nil
	}
	sort.Slice(vals, func(i, j int) bool { return len(vals[i]) > len(vals[j]) })
	r := &Redactor{}
	for _, v := range vals {
		r.values = append(r.values, []byte(v))
	}
	return r
}

// Bytes returns b with every secret replaced; b itself when there is none
// (no copy).
func (r *Redactor) Bytes(b []byte) []byte {
	if r == nil {
		return b
	}
	for _, v := range r.values {
		if bytes.Contains(b, v) {
			b = bytes.ReplaceAll(b, v, []byte(Mark))
		}
	}
	return b
}

// String returns s with every secret replaced.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	for _, v := range r.values {
		s = strings.ReplaceAll(s, string(v), Mark)
	}
	return s
}
