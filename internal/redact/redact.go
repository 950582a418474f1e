// Package redact keeps credentials out of everything flower writes and
// prints: the values of the credential variables flower knows (Vars), of
// every environment variable whose name ends in TOKEN, KEY, SECRET,
// PASSWORD or CREDENTIALS (FromEnv), and anything shaped like a well-known
// token (Anthropic sk-ant-…, GitHub ghp_…/github_pat_…, GitLab glpat-…, AWS
// AKIA…, Slack xox[abp]-…) are replaced with Mark in events, the session
// store, the manifest, notes, handoffs, spill files and flower's own
// stdout and stderr (Writer).
//
// Lifecycle: New or FromEnv once per process (or Runtime) from its
// environment, or Process for the process's own; the Redactor is immutable
// and safe for concurrent use. A nil *Redactor knows no values but still
// replaces token shapes. Values shorter than MinLen are not secrets worth
// the damage of replacing them in ordinary text, and are left alone.
package redact

import (
	"bytes"
	"io"
	"os"
	"regexp"
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

// shapes are the well-known token shapes, each with the literal prefixes
// one of which must be present before the pattern is tried.
var shapes = []struct {
	prefixes []string
	re       string
}{
	{[]string{"sk-ant-"}, `sk-ant-[A-Za-z0-9_-]{8,}`},
	{[]string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, `\bgh[pousr]_[A-Za-z0-9]{20,}`},
	{[]string{"github_pat_"}, `github_pat_[A-Za-z0-9_]{20,}`},
	{[]string{"glpat-"}, `glpat-[A-Za-z0-9_-]{20,}`},
	{[]string{"AKIA"}, `\bAKIA[0-9A-Z]{16}\b`},
	{[]string{"xoxa-", "xoxb-", "xoxp-"}, `\bxox[abp]-[A-Za-z0-9-]{10,}`},
}

// mayHold reports whether s holds one of prefixes.
func mayHold(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// mayHoldBytes is mayHold for bytes.
func mayHoldBytes(b []byte, prefixes []string) bool {
	for _, p := range prefixes {
		if bytes.Contains(b, []byte(p)) {
			return true
		}
	}
	return false
}

// shapeRes compiles shapes on first use.
var shapeRes = sync.OnceValue(func() []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(shapes))
	for i, s := range shapes {
		out[i] = regexp.MustCompile(s.re)
	}
	return out
})

// Redactor replaces known secret values.
type Redactor struct {
	values [][]byte // longest first, so a value containing another goes whole
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
	r := &Redactor{}
	for _, v := range keep {
		r.values = append(r.values, []byte(v))
	}
	return r
}

// Bytes returns b with every secret replaced; b itself when there is none
// (no copy).
func (r *Redactor) Bytes(b []byte) []byte {
	if r != nil {
		for _, v := range r.values {
			if bytes.Contains(b, v) {
				b = bytes.ReplaceAll(b, v, []byte(Mark))
			}
		}
	}
	for i, s := range shapes {
		if re := shapeRes()[i]; mayHoldBytes(b, s.prefixes) && re.Match(b) {
			b = re.ReplaceAll(b, []byte(Mark))
		}
	}
	return b
}

// String returns s with every secret replaced.
func (r *Redactor) String(s string) string {
	if r != nil {
		for _, v := range r.values {
			s = strings.ReplaceAll(s, string(v), Mark)
		}
	}
	for i, sh := range shapes {
		if mayHold(s, sh.prefixes) {
			s = shapeRes()[i].ReplaceAllString(s, Mark)
		}
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
