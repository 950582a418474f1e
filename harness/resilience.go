package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/flowerhq/flower/internal/envlist"
	"github.com/flowerhq/flower/internal/lazyre"
)

// Resilience is the retry policy of the Runtime. The zero value is
// disabled; NewResilience gives the defaults.
type Resilience struct {
	Enabled     bool
	MaxAttempts int           // attempts per step, interrupts and handoffs not counted
	BaseDelay   time.Duration // delay before the 2nd attempt; doubles each time
	MaxDelay    time.Duration
	// ResumePrompt is sent when a failed attempt is resumed in the same
	// session.
	ResumePrompt string
	// OnlineTimeout bounds WaitOnline for unattended use; 0 waits until
	// the API answers or the context ends.
	OnlineTimeout time.Duration
	// IdleTimeout ends an attempt as a transient StallError when claude
	// prints no stream line for this long while no tool call and no
	// subagent runs (those may be silent as long as they take); the next
	// attempt resumes the same session. 0 takes DefaultIdleTimeout,
	// negative turns the limit off.
	IdleTimeout time.Duration
}

// DefaultIdleTimeout is the idle limit. Steps stream partial messages
// (--include-partial-messages), so a turn being written prints a line per
// streamed piece, and a running tool or subagent suspends the limit: what
// is left silent is one API request before its first event (a long
// prompt's first token, the CLI's own compaction request), which takes
// seconds to a minute or two. Five minutes is well past that and half the
// CLI's own request timeout (API_TIMEOUT_MS, 10 min), which a stalled
// stream would otherwise wait out before the CLI's retry does the same.
const DefaultIdleTimeout = 5 * time.Minute

// defaultResumePrompt continues a session after a failure.
const defaultResumePrompt = "The previous attempt was cut off by an infrastructure error (network or API). " +
	"Nothing is wrong with your work. Continue the task exactly where you left off; do not repeat finished steps."

// NewResilience returns the defaults: enabled, 5 attempts, 2s doubling up
// to 60s, idle limit DefaultIdleTimeout.
func NewResilience() Resilience {
	return Resilience{Enabled: true, MaxAttempts: 5, BaseDelay: 2 * time.Second, MaxDelay: 60 * time.Second, ResumePrompt: defaultResumePrompt,
		IdleTimeout: DefaultIdleTimeout}
}

// idle is the attempt's idle limit: 0 for none.
func (r Resilience) idle() time.Duration {
	switch {
	case r.IdleTimeout < 0:
		return 0
	case r.IdleTimeout == 0:
		return DefaultIdleTimeout
	}
	return r.IdleTimeout
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

// WaitOnline blocks until a TCP connection to the API host succeeds or ctx
// ends (by default it never gives up); OnlineTimeout > 0 bounds the
// wait for unattended use. baseURL empty means api.anthropic.com. After each
// failed probe, offline (when not nil) is told the probe's error and when
// the next one comes; probes back off from 200ms to 10s.
func (r Resilience) WaitOnline(ctx context.Context, baseURL string, offline func(err error, next time.Time)) error {
	host := apiHost(baseURL)
	if r.OnlineTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.OnlineTimeout)
		defer cancel()
	}
	var d net.Dialer
	wait := 200 * time.Millisecond
	for {
		c, err := d.DialContext(ctx, "tcp", host)
		if err == nil {
			c.Close()
			return nil
		}
		if ctx.Err() != nil {
			return r.offlineError(ctx, host, err)
		}
		if offline != nil {
			offline(err, time.Now().Add(wait))
		}
		select {
		case <-ctx.Done():
			return r.offlineError(ctx, host, err)
		case <-time.After(wait):
		}
		wait = min(2*wait, 10*time.Second)
	}
}

func (r Resilience) offlineError(ctx context.Context, host string, last error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && r.OnlineTimeout > 0 {
		return fmt.Errorf("harness: %s stayed unreachable for %s (the online timeout; 0 waits forever): %w", host, r.OnlineTimeout, last)
	}
	return ctx.Err()
}

// apiHost is the host:port WaitOnline probes for baseURL.
func apiHost(baseURL string) string {
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
	return host
}

// waitOnline is the Runtime's WaitOnline between attempts: while the API is
// unreachable each probe emits an "offline" event (error, next_probe), and
// an "online" event follows when it answers again.
func (r *Runtime) waitOnline(ctx context.Context, emit func(Event)) error {
	base := envlist.Getter(r.env)("ANTHROPIC_BASE_URL")
	since := time.Time{}
	err := r.opts.Resilience.WaitOnline(ctx, base, func(err error, next time.Time) {
		if since.IsZero() {
			since = time.Now()
		}
		emit(Event{Kind: EventOffline, Data: EventData(offlineProbe{Host: apiHost(base), Error: err.Error(),
			NextProbe: next.UTC().Format(time.RFC3339Nano), WaitedS: time.Since(since).Seconds()})})
	})
	switch {
	case err != nil:
		emit(Event{Kind: EventOffline, Data: EventData(offlineGaveUp{Host: apiHost(base), Error: err.Error(), GaveUp: true})})
	case !since.IsZero():
		emit(Event{Kind: EventOnline, Data: EventData(OnlineEvent{Host: apiHost(base), WaitedS: time.Since(since).Seconds()})})
	}
	return err
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

var statusRe = lazyre.New(`(?i)\b(?:api error|status|error):?\s*(\d{3})\b`)

// Classify names the kind of a failed attempt from what claude reported
// and whether the Runtime retries it. It is pure: f comes
// from FailureOf(err). The rules follow what the pinned claude prints for
// each fault (testdata/faults, recorded by scripts/record-faults.sh):
//
//   - a turn or budget limit (subtype error_max_*, terminal_reason max_turns
//     or budget_exhausted) is final: KindLimit;
//   - a full context (terminal_reason prompt_too_long, or an overflow text
//     without another status) is KindOverflow, for a handoff;
//   - an HTTP status decides when there is one: 401/403 KindAuth; 408, 409,
//     429, 5xx and 529 retry; any other 4xx (400, 404, 413) KindBadReq;
//   - an API error without a status means no usable answer arrived
//     (connection refused, reset, dropped mid-stream, timed out, an empty or
//     malformed response): it retries;
//   - without a result line (claude died), the text decides: an exit or a
//     signal retries, a start failure does not.
func Classify(f Failure) (kind string, retry bool) {
	e := strings.ToLower(f.Text)
	switch {
	case f.Start || strings.HasPrefix(e, "harness: start"):
		return KindStart, false
	case strings.HasPrefix(f.Subtype, "error_max") || f.TerminalReason == "max_turns" || f.TerminalReason == "budget_exhausted":
		return KindLimit, false
	case f.TerminalReason == "prompt_too_long" || (f.Status == 0 || f.Status == 400) && IsOverflow(f.Text):
		return KindOverflow, false
	}
	status := f.Status
	if m := statusRe().FindStringSubmatch(e); status == 0 && m != nil {
		status, _ = strconv.Atoi(m[1])
	}
	switch {
	case status == 401 || status == 403:
		return KindAuth, false
	case status == 408 || status == 409 || status == 429 || status >= 500 && status < 600:
		return KindRetry, true
	case status >= 400 && status < 500:
		return KindBadReq, false
	case f.IsError && f.TerminalReason == "api_error":
		return KindRetry, true
	}
	return classifyText(e)
}

// classifyText is Classify's last resort for failures that carry no result
// fields (claude ended without a result line, or an error from elsewhere).
func classifyText(e string) (kind string, retry bool) {
	switch {
	case e == "":
		return KindUnknown, false
	case strings.Contains(e, "maximum number of turns") || strings.Contains(e, "maximum budget"):
		return KindLimit, false
	}
	for _, w := range []string{"authentication", "invalid api key", "invalid x-api-key", "unauthorized", "forbidden"} {
		if strings.Contains(e, w) {
			return KindAuth, false
		}
	}
	for _, w := range []string{"exited without a result", "killed by signal", "overloaded", "connection", "econnreset",
		"econnrefused", "etimedout", "socket hang up", "timed out", "timeout", "network", "fetch failed",
		"internal server error", "service unavailable", "bad gateway", "rate limit", "terminated", "stream ended",
		"empty or malformed response"} {
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

// IsOverflow reports whether any text says the context is full: such a
// hard error becomes an immediate handoff.
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
