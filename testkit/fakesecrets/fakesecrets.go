// Package fakesecrets makes fake but valid-shaped credentials for tests of
// redaction: one of every shape flower must keep out of what it writes and
// prints. The tokens are built at run time from parts (never written whole
// in the source, so secret scanners of this repository do not flag it) and
// from a fixed pseudo-random sequence (the same every run; random enough to
// pass gitleaks' entropy thresholds).
//
// Lifecycle: none; Samples returns a fresh slice each call.
package fakesecrets

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
)

// Sample is one secret shape.
type Sample struct {
	Name string
	// Text holds the secret in its usual context (a header, a URL, an
	// assignment, a key block), one or more lines.
	Text string
	// Secrets are the parts of Text that must appear nowhere after
	// redaction.
	Secrets []string
}

const (
	alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	lowers = "abcdefghijklmnopqrstuvwxyz0123456789"
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b32    = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	digits = "0123456789"
	b64    = alnum + "+/"
)

// gen draws characters from a fixed sequence.
type gen struct{ r *rand.Rand }

func (g gen) of(set string, n int) string {
	var b strings.Builder
	for range n {
		b.WriteByte(set[g.r.IntN(len(set))])
	}
	return b.String()
}

// j joins parts: the prefixes of the shapes are never whole in the source.
func j(parts ...string) string { return strings.Join(parts, "") }

// Samples returns one sample of every shape.
func Samples() []Sample {
	g := gen{rand.New(rand.NewPCG(33, 6))}
	one := func(name, prefix, secret, suffix string) Sample {
		return Sample{Name: name, Text: prefix + secret + suffix, Secrets: []string{secret}}
	}
	var out []Sample
	out = append(out,
		one("url-credentials", "postgres://admin:", g.of(alnum, 20), "@db.example.com:5432/app"),
		one("authorization-bearer", "Authorization: Bearer ", g.of(alnum, 40), ""),
		one("authorization-basic", "Authorization: Basic ", base64.StdEncoding.EncodeToString([]byte("deploy:"+g.of(alnum, 18))), ""),
		one("jwt", "", jwt(g), ""),
		one("slack-bot", "", j("xo", "xb-", g.of(digits, 12), "-", g.of(digits, 13), "-", g.of(alnum, 24)), ""),
		one("slack-user", "", j("xo", "xp-", g.of(digits, 12), "-", g.of(digits, 12), "-", g.of(digits, 12), "-", g.of(lowers, 32)), ""),
		one("slack-webhook", "", j("https://", "hooks.", "slack.com/services/T", g.of(upper, 10), "/B", g.of(upper, 10), "/", g.of(alnum, 24)), ""),
		one("stripe", "", j("sk", "_live_", g.of(alnum, 24)), ""),
		one("google-api-key", "", j("AI", "za", g.of(alnum+"_-", 35)), ""),
		one("npm", "", j("np", "m_", g.of(lowers, 36)), ""),
		one("pypi", "", j("pypi-", "AgEIcHlwaS5vcmc", g.of(alnum, 60)), ""),
		one("github-ghp", "", j("gh", "p_", g.of(alnum, 36)), ""),
		one("github-gho", "", j("gh", "o_", g.of(alnum, 36)), ""),
		one("github-ghu", "", j("gh", "u_", g.of(alnum, 36)), ""),
		one("github-ghs", "", j("gh", "s_", g.of(alnum, 36)), ""),
		one("github-ghr", "", j("gh", "r_", g.of(alnum, 36)), ""),
		one("github-fine-grained", "", j("github", "_pat_", "11", g.of(upper, 20), "_", g.of(alnum, 59)), ""),
		one("gitlab", "", j("gl", "pat-", g.of(alnum, 20)), ""),
		one("aws-access-key", "", j("AK", "IA", g.of(b32, 16)), ""),
		one("aws-secret-key", "aws_secret_access_key = ", g.of(b64, 40), ""),
		one("aws-secret-key-env", "AWS_SECRET_ACCESS_KEY=", g.of(b64, 40), ""),
		one("anthropic", "", j("sk-", "ant-", "api03-", g.of(alnum+"_-", 93), "AA"), ""),
		one("anthropic-oauth", "", j("sk-", "ant-", "oat01-", g.of(alnum+"_-", 80)), ""),
		one("openai", "", j("sk-", "proj-", g.of(alnum, 74), "T3Blbk", "FJ", g.of(alnum, 74)), ""),
	)
	return append(out, keyBlock(g, "RSA PRIVATE KEY"), keyBlock(g, "OPENSSH PRIVATE KEY"), keyBlock(g, "PRIVATE KEY"))
}

// jwt is a signed-token shape: a real header, a payload and a signature.
func jwt(g gen) string {
	enc := base64.RawURLEncoding
	head := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	body := enc.EncodeToString([]byte(`{"sub":"` + g.of(alnum, 16) + `","iat":1700000000}`))
	return head + "." + body + "." + g.of(alnum+"_-", 43)
}

// keyBlock is a private key block of kind; every body line is a secret.
func keyBlock(g gen, kind string) Sample {
	s := Sample{Name: strings.ToLower(strings.ReplaceAll(kind, " ", "-"))}
	lines := []string{j("-----", "BEGIN ", kind, "-----")}
	for range 5 {
		l := g.of(b64, 64)
		lines = append(lines, l)
		s.Secrets = append(s.Secrets, l)
	}
	lines = append(lines, j("-----", "END ", kind, "-----"))
	s.Text = strings.Join(lines, "\n")
	return s
}
