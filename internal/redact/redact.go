// Package redact keeps credentials out of everything flower writes and
// prints: the values of the credential variables flower knows (Vars), of
// every environment variable whose name ends in TOKEN, KEY, SECRET,
// PASSWORD or CREDENTIALS (FromEnv), and anything shaped like a secret by
// gitleaks' rule set or flower's additions (rules.go: cloud and API keys,
// GitHub/GitLab/Slack/Stripe/npm/PyPI tokens, JWTs, private key blocks,
// URL passwords, Authorization headers, …) are replaced with Mark in
// events, the session store, the manifest, notes, handoffs, spill files,
// claude's transcripts and flower's own stdout and stderr (Writer). JSON is
// redacted in its decoded string values, never in its text.
//
// Lifecycle: New or FromEnv once per process (or Runtime) from its
// environment, or Process for the process's own; the Redactor is immutable
// and safe for concurrent use. A nil *Redactor knows no values but still
// replaces secret shapes. Values shorter than MinLen are not secrets worth
// the damage of replacing them in ordinary text, and are left alone.
package redact

import (
	"encoding/json"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
)

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

// Suffixes end the names of the other variables whose values are secrets
// (GITHUB_TOKEN, OPENAI_API_KEY, DB_PASSWORD, …).
var Suffixes = []string{"TOKEN", "KEY", "SECRET", "PASSWORD", "CREDENTIALS"}

// Redactor replaces known secret values.
type Redactor struct {
	values [][]byte // longest first, so a value containing another goes whole
	memo   *memo    // what Bytes left unchanged (clean.go)
}

// New collects the values of Vars from getenv. It returns nil when there are
// none (then only token shapes are replaced).
func New(getenv func(string) string) *Redactor {
	var vals []string
	for _, k := range Vars {
		vals = append(vals, getenv(k))
	}
	return of(vals)
}

// FromEnv collects the values of Vars and of every variable of env
// (KEY=VALUE entries) whose name ends in one of Suffixes.
func FromEnv(env []string) *Redactor {
	get := map[string]string{}
	var vals []string
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		get[k] = v
		up := strings.ToUpper(k)
		for _, s := range Suffixes {
			if strings.HasSuffix(up, s) {
				vals = append(vals, v)
				break
			}
		}
	}
	for _, k := range Vars {
		vals = append(vals, get[k])
	}
	return of(vals)
}

// Process is FromEnv of this process's environment, collected once.
var Process = sync.OnceValue(func() *Redactor { return FromEnv(os.Environ()) })

// of is the Redactor of vals (those of MinLen or more), nil for none.
func of(vals []string) *Redactor {
	seen := map[string]bool{}
	var keep []string
	for _, v := range vals {
		v = strings.TrimSpace(v)
		if len(v) >= MinLen && !seen[v] {
			seen[v] = true
			keep = append(keep, v)
		}
	}
	if len(keep) == 0 {
		return nil
	}
	sort.Slice(keep, func(i, j int) bool { return len(keep[i]) > len(keep[j]) })
	r := &Redactor{memo: memoOf(keep)}
	for _, v := range keep {
		r.values = append(r.values, []byte(v))
	}
	return r
}

// Bytes returns b with every secret replaced; b itself when there is none
// (no copy). JSON (the whole of b, or each line of JSON Lines) is redacted
// in its decoded string values, never in its text: a token after an
// escaped newline, a tab or \u003c is found as it would be in the text
// the JSON holds. Other text is redacted as it is, with JSON-style escapes
// (\n, \t, \u2028, …) read as separators.
func (r *Redactor) Bytes(b []byte) []byte {
	if len(b) == 0 || r.clean().has(b) || !r.mayHold(b) && !hidesKeyword(b) {
		return b
	}
	if !json.Valid(b) {
		return r.lines(b)
	}
	out := r.jsonText(b)
	if sameStart(out, b) && len(out) == len(b) {
		r.clean().add(b) // only JSON: lines takes a memo's text for a JSON line
	}
	return out
}

// String returns s with every secret replaced.
func (r *Redactor) String(s string) string {
	if s == "" {
		return s
	}
	b := []byte(s)
	if out := r.Bytes(b); !sameStart(out, b) || len(out) != len(b) {
		return string(out)
	}
	return s
}

// Writer redacts what goes to W, one Write at a time (flower writes its
// lines whole).
type Writer struct {
	W io.Writer
	R *Redactor
}

func (w *Writer) Write(p []byte) (int, error) {
	if _, err := w.W.Write(w.R.Bytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Underlying is the writer w redacts for (w itself if it is no *Writer):
// for terminal checks and raw pass-through.
func Underlying(w io.Writer) io.Writer {
	if rw, ok := w.(*Writer); ok {
		return rw.W
	}
	return w
}
