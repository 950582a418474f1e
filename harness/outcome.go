package harness

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/flowerhq/flower/internal/textclip"
)

// The outcomes of one attempt that are not a success, matched with
// errors.Is and errors.As. StepResult.Error and StepResult.Errors keep their
// rendered text (Error()).
var (
	// ErrInterrupted ends an attempt a human interrupted; its text is
	// Interrupted.
	ErrInterrupted = errors.New(Interrupted)
	// ErrHandoffDue ends an attempt whose context reached HandoffPolicy.At;
	// its text is HandoffDue.
	ErrHandoffDue = errors.New(HandoffDue)
)

// StartError is an attempt whose claude never got going: it could not be
// started, printed something that is not stream-json before system/init,
// died before it, or stayed silent past Options.StartTimeout. It is never
// retried: the same command would fail the same way.
type StartError struct {
	Reason string // what went wrong, one line
	Stderr string // the tail of claude's stderr, "" when empty
}

func (e *StartError) Error() string { return "harness: start: " + e.Reason + stderrNote(e.Stderr) }

// StallError is an attempt that claude held with no stream byte for the
// idle limit (Resilience.IdleTimeout) while no tool call or subagent ran:
// an API that accepted the request and went silent. It is transient: the
// Runtime resumes the same session.
type StallError struct {
	Idle time.Duration
}

func (e *StallError) Error() string {
	return fmt.Sprintf("claude stalled: no stream byte for %s with no tool or subagent running (timed out by the idle limit, --idle-timeout)", e.Idle)
}

// ExitError is an attempt whose claude ended without a result line: Code is
// its exit status (-1 when a signal ended it), Signal the signal's name.
type ExitError struct {
	Code   int
	Signal string
	Stderr string // the tail of claude's stderr
}

func (e *ExitError) Error() string {
	return fmt.Sprintf("claude exited without a result (%s)%s", e.how(), stderrNote(e.Stderr))
}

func (e *ExitError) how() string {
	if e.Signal != "" {
		return "killed by signal " + e.Signal
	}
	return fmt.Sprintf("exit %d", e.Code)
}

// APIError is an attempt whose result line says is_error: the API (or the
// CLI's own limits) failed the turn. The fields are what claude reported.
type APIError struct {
	Subtype        string // result subtype: "success" (API errors), "error_max_turns", …
	Status         int    // api_error_status, 0 when absent
	Text           string // errors[] joined, else result, else subtype
	TerminalReason string
}

func (e *APIError) Error() string {
	msg := e.Text
	var tags []string
	if e.Status != 0 && !strings.Contains(msg, fmt.Sprint(e.Status)) {
		tags = append(tags, fmt.Sprintf("status %d", e.Status))
	}
	for _, v := range []string{e.Subtype, e.TerminalReason} {
		if v != "" && v != "success" && !strings.Contains(msg, v) {
			tags = append(tags, v)
		}
	}
	if len(tags) > 0 {
		msg = fmt.Sprintf("%s (%s)", msg, strings.Join(tags, ", "))
	}
	return msg
}

// resultFailure is the APIError of a result line, nil for a success.
func resultFailure(r gjson.Result) error {
	if !r.Get("is_error").Bool() {
		return nil
	}
	e := &APIError{Subtype: r.Get("subtype").String(), Status: int(r.Get("api_error_status").Int()),
		TerminalReason: r.Get("terminal_reason").String()}
	if errs := r.Get("errors").Array(); len(errs) > 0 {
		parts := make([]string, len(errs))
		for i, x := range errs {
			parts[i] = x.String()
		}
		e.Text = strings.Join(parts, "; ")
	}
	if e.Text == "" {
		e.Text = r.Get("result").String()
	}
	if e.Text == "" {
		e.Text = e.Subtype
	}
	return e
}

// resultError is the rendered text of a result line's failure, "" for a
// success.
func resultError(r gjson.Result) string {
	if err := resultFailure(r); err != nil {
		return err.Error()
	}
	return ""
}

// Failure is what claude reported about a failed attempt, the input of
// Classify: the fields of its result line when one came, how the process
// ended, and the rendered text.
type Failure struct {
	Subtype        string // result subtype, "" without a result line
	IsError        bool   // the result line's is_error
	Status         int    // api_error_status, 0 when absent
	TerminalReason string
	Text           string // the rendered error (err.Error())
	ExitCode       int    // claude's exit status; -1 for a signal or unknown
	Start          bool   // claude never got going (StartError)
}

// FailureOf is the Failure of an attempt's error.
func FailureOf(err error) Failure {
	f := Failure{ExitCode: -1}
	if err == nil {
		return f
	}
	f.Text = err.Error()
	var api *APIError
	var ex *ExitError
	var st *StartError
	switch {
	case errors.As(err, &api):
		f.Subtype, f.IsError, f.Status, f.TerminalReason = api.Subtype, true, api.Status, api.TerminalReason
	case errors.As(err, &ex):
		f.ExitCode = ex.Code
	case errors.As(err, &st):
		f.Start = true
	}
	return f
}

func stderrNote(s string) string {
	if s == "" {
		return ""
	}
	return ": " + textclip.Runes(s, 1500)
}
