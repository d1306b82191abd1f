package api

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// Kind classifies a failed call so that the caller can decide what to do next without reading
// messages. Every *Error has exactly one Kind.
type Kind int

// The kinds of failure. KindNone is the zero value: no error, or an error that is not an *Error.
const (
	KindNone Kind = iota
	// KindRejected: the service refused the request; nothing was created. Retrying the same
	// request will be refused again.
	KindRejected
	// KindRetryable: the request is safe to send again, because nothing reached the service
	// (connection refused, DNS, dial timeout) or because the operation only reads (Get Payout,
	// List Payout Providers) and failed in a way that may pass.
	KindRetryable
	// KindRateLimited: the service asked to slow down (HTTP 429). Error.RetryAfter says how long.
	// Nothing was created.
	KindRateLimited
	// KindOutcomeUnknown: a Create Payout request was sent and then something went wrong
	// (timeout, broken connection, 5xx, an answer that cannot be read). The payout may exist: look
	// it up by external_invoice_ref before sending it again.
	KindOutcomeUnknown
	// KindUnauthorized: the auth token was refused (401/403 or a failure about the token).
	KindUnauthorized
	// KindNotFound: Get Payout says, unambiguously, that no payout has this reference. On
	// Create Payout (HTTP 404) it means the endpoint is missing: check the base URL.
	KindNotFound
	// KindDuplicate: Create Payout was refused because the external_invoice_ref is already
	// used. This request created nothing, but a payout with that reference may exist.
	KindDuplicate
)

var kindNames = [...]string{
	KindNone:           "none",
	KindRejected:       "rejected",
	KindRetryable:      "retryable",
	KindRateLimited:    "rate limited",
	KindOutcomeUnknown: "outcome unknown",
	KindUnauthorized:   "unauthorized",
	KindNotFound:       "not found",
	KindDuplicate:      "duplicate",
}

// String returns the kind's name, for example "outcome unknown".
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Sentinels, one per Kind, so that callers can write errors.Is(err, api.ErrOutcomeUnknown).
// An *Error matches the sentinel of its Kind.
var (
	ErrRejected       = errors.New("rejected by the payout service")
	ErrRetryable      = errors.New("payout service temporarily unavailable")
	ErrRateLimited    = errors.New("rate limited by the payout service")
	ErrOutcomeUnknown = errors.New("outcome of the request unknown")
	ErrUnauthorized   = errors.New("auth token refused by the payout service")
	ErrNotFound       = errors.New("payout not found")
	ErrDuplicate      = errors.New("external_invoice_ref already used")
)

// Reasons carried in Error.Err.
var (
	// ErrBodyTooLarge: the response body exceeded Config.MaxResponseBytes.
	ErrBodyTooLarge = errors.New("response body too large")
	// ErrBadResponse: the response could not be understood (not JSON, no envelope, an
	// envelope that is neither clearly ok nor clearly fail, data of the wrong shape).
	ErrBadResponse = errors.New("unreadable response")
	// ErrRedirect: the service answered with a redirect, which is never followed.
	ErrRedirect = errors.New("redirect not followed")
	// ErrAmountPrecision: an amount has more than two decimals and cannot be sent as MYR.
	ErrAmountPrecision = errors.New("amount has more than 2 decimals")
	// ErrEmptyReference: Get Payout was called without a reference.
	ErrEmptyReference = errors.New("empty reference")
)

var kindSentinels = [...]error{
	KindRejected:       ErrRejected,
	KindRetryable:      ErrRetryable,
	KindRateLimited:    ErrRateLimited,
	KindOutcomeUnknown: ErrOutcomeUnknown,
	KindUnauthorized:   ErrUnauthorized,
	KindNotFound:       ErrNotFound,
	KindDuplicate:      ErrDuplicate,
}

// Error is the one error type the client returns for a failed call. Fields the service did not
// send are zero. It never contains the auth token.
type Error struct {
	Op         string // "create payout", "get payout", "list providers"
	HTTPStatus int    // 0 when no response arrived
	Code       int    // envelope code, 0 if absent
	Status     string // envelope status, e.g. "fail"
	Message    string // envelope message (or a snippet of a non-JSON body)
	ErrorText  string // envelope error
	UUID       string // envelope uuid, for the service's support
	Kind       Kind
	RetryAfter time.Duration // with KindRateLimited: how long to wait
	Err        error         // the underlying cause, if any
}

// Error describes the failure in one line.
func (e *Error) Error() string {
	if e.Kind == KindUnauthorized {
		return e.unauthorizedText()
	}
	var b strings.Builder
	b.WriteString(e.Op)
	b.WriteString(": ")
	b.WriteString(e.Kind.String())
	if e.HTTPStatus != 0 {
		b.WriteString(": HTTP ")
		b.WriteString(strconv.Itoa(e.HTTPStatus))
	}
	if e.Code != 0 {
		b.WriteString(" code ")
		b.WriteString(strconv.Itoa(e.Code))
	}
	if e.Status != "" {
		b.WriteString(" status ")
		b.WriteString(e.Status)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.ErrorText != "" && e.ErrorText != e.Message {
		b.WriteString(" (")
		b.WriteString(e.ErrorText)
		b.WriteString(")")
	}
	if e.UUID != "" {
		b.WriteString(" uuid ")
		b.WriteString(e.UUID)
	}
	if e.RetryAfter > 0 {
		b.WriteString(" retry after ")
		b.WriteString(e.RetryAfter.String())
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// unauthorizedText says in words that the token was refused: the envelope's code and status add
// nothing to that, the service's own words (already cleaned of the token) may say why.
func (e *Error) unauthorizedText() string {
	var b strings.Builder
	b.WriteString(e.Op)
	b.WriteString(": the service refused the auth token")
	detail := e.Message
	if detail == "" {
		detail = e.ErrorText
	}
	switch {
	case e.HTTPStatus != 0 && detail != "":
		b.WriteString(" (HTTP " + strconv.Itoa(e.HTTPStatus) + ": " + detail + ")")
	case e.HTTPStatus != 0:
		b.WriteString(" (HTTP " + strconv.Itoa(e.HTTPStatus) + ")")
	case detail != "":
		b.WriteString(" (" + detail + ")")
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the sentinel of e's Kind.
func (e *Error) Is(target error) bool {
	if e.Kind > KindNone && int(e.Kind) < len(kindSentinels) {
		return target == kindSentinels[e.Kind]
	}
	return false
}

// KindOf returns the Kind of the *Error in err's chain, or KindNone if err is nil or holds no
// *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindNone
}

// ConfigError says which Config field is wrong. Value is empty for secret fields.
type ConfigError struct {
	Field string
	Value string
	Err   error
}

// Error names the field and, unless secret, its value.
func (e *ConfigError) Error() string {
	if e.Value == "" {
		return "api config " + e.Field + ": " + e.Err.Error()
	}
	return "api config " + e.Field + " " + strconv.Quote(e.Value) + ": " + e.Err.Error()
}

// Unwrap returns the reason, such as ErrInsecureURL.
func (e *ConfigError) Unwrap() error { return e.Err }

// Reasons carried by ConfigError.
var (
	ErrMissing     = errors.New("required")
	ErrInsecureURL = errors.New("https required unless the host is loopback")
	ErrInvalidURL  = errors.New("invalid URL")
	ErrInvalid     = errors.New("invalid value")
)
