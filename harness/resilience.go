package harness

import (
	"context"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Resilience is the retry policy of the Runtime (seed Resilience; its table
// was lost). The zero value is disabled; NewResilience gives the defaults.
type Resilience struct {
	Enabled     bool
	MaxAttempts int           // attempts per step, interrupts and handoffs not counted
	BaseDelay   time.Duration // delay before the 2nd attempt; doubles each time
	MaxDelay    time.Duration
	// ResumePrompt is sent when a failed attempt is resumed in the same
	// session.
	ResumePrompt string
	// OnlineTimeout bounds WaitOnline; 0 means 5 minutes.
	OnlineTimeout time.Duration
}

// DefaultResumePrompt continues a session after a failure.
const DefaultResumePrompt = "The previous attempt was cut off by an infrastructure error (network or API). " +
	"Nothing is wrong with your work. Continue the task exactly where you left off; do not repeat finished steps."

// NewResilience returns the defaults: enabled, 5 attempts, 2s doubling up
// to 60s.
func NewResilience() Resilience {
	return Resilience{Enabled: true, MaxAttempts: 5, BaseDelay: 2 * time.Second, MaxDelay: 60 * time.Second, ResumePrompt: DefaultResumePrompt}
}

// DelayFor is the back-off before attempt+1: BaseDelay·2^(attempt-1),
// capped at MaxDelay.
func (r Resilience) DelayFor(attempt int) time.Duration {
	d := r.BaseDelay
	for i := 1; i < attempt && d < r.MaxDelay; i++ {
		d *= 2
	}
	if r.MaxDelay > 0 && d > r.MaxDelay {
		d = r.MaxDelay
	}
	return d
}

// WaitOnline blocks until a TCP connection to the API host succeeds, the
// timeout passes or ctx ends. baseURL empty means api.anthropic.com.
func (r Resilience) WaitOnline(ctx context.Context, baseURL string) error {
	host := "api.anthropic.com:443"
	if u, err := url.Parse(baseURL); err == nil && u.Host != "" {
		host = u.Host
		if u.Port() == "" {
			if u.Scheme == "http" {
				host += ":80"
			} else {
				host += ":443"
			}
		}
	}
	timeout := r.OnlineTimeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	wait := 200 * time.Millisecond
	for {
		c, err := d.DialContext(ctx, "tcp", host)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 10*time.Second)
	}
}

// Classification of a failed attempt.
const (
	KindRetry     = "retry" // network, 5xx, 529, 429, timeouts
	KindAuth      = "auth"  // 401/403, bad key
	KindBadReq    = "bad_request"
	KindLimit     = "limit"    // max turns, max budget
	KindOverflow  = "overflow" // context full
	KindStart     = "start"    // claude could not start or spoke no stream-json
	KindUnknown   = "unknown"
	KindCancelled = "cancelled"
)

var statusRe = regexp.MustCompile(`(?i)\b(?:api error|status|error):?\s*(\d{3})\b`)

// Classify names the kind of a failed attempt from what claude reported
// and whether the Runtime retries it (seed classify): network, 5xx, 529,
// 429 and timeouts retry; auth, bad requests, budget/turn limits and start
// failures do not. It is pure: f comes from FailureOf(err).
func Classify(f Failure) (kind string, retry bool) {
	e := strings.ToLower(f.Text)
	switch {
	case f.Start:
		return KindStart, false
	case e == "" && f.Status == 0 && f.Subtype == "":
		return KindUnknown, false
	case IsOverflow(f.Text, f.TerminalReason):
		return KindOverflow, false
	case strings.HasPrefix(f.Subtype, "error_max") || strings.Contains(e, "max_turns") ||
		strings.Contains(e, "maximum number of turns") || strings.Contains(e, "budget") || strings.Contains(e, "error_max"):
		return KindLimit, false
	case strings.HasPrefix(e, "harness: start"):
		return KindStart, false
	}
	status := f.Status
	if m := statusRe.FindStringSubmatch(e); status == 0 && m != nil {
		status, _ = strconv.Atoi(m[1])
	}
	switch {
	case status == 401 || status == 403:
		return KindAuth, false
	case status == 408 || status == 409 || status == 429 || status >= 500 && status < 600:
		return KindRetry, true
	case status >= 400 && status < 500:
		return KindBadReq, false
	}
	for _, w := range []string{"authentication", "invalid api key", "invalid x-api-key", "oauth", "unauthorized", "forbidden"} {
		if strings.Contains(e, w) {
			return KindAuth, false
		}
	}
	for _, w := range []string{"overloaded", "connection", "econnreset", "econnrefused", "etimedout", "socket hang up",
		"timed out", "timeout", "network", "fetch failed", "internal server error", "service unavailable",
		"bad gateway", "rate limit", "terminated", "stream ended", "exited without a result", "killed by signal"} {
		if strings.Contains(e, w) {
			return KindRetry, true
		}
	}
	if strings.Contains(e, "invalid_request") || strings.Contains(e, "bad request") {
		return KindBadReq, false
	}
	return KindUnknown, false
}

var overflowTexts = []string{
	"prompt is too long",
	"context length exceeded",
	"context_length_exceeded",
	"maximum context length",
	"too many total text bytes",
	"input length and max_tokens exceed",
	"exceeds the context window",
	"context window exceeded",
	"prompt_too_long",
	"request too large",
}

// IsOverflow reports whether any text says the context is full (seed
// is_overflow): such a hard error becomes an immediate handoff.
func IsOverflow(texts ...string) bool {
	for _, t := range texts {
		t = strings.ToLower(t)
		for _, o := range overflowTexts {
			if strings.Contains(t, o) {
				return true
			}
		}
	}
	return false
}
