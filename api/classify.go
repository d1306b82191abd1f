package api

import (
	"fmt"
	"net/http"
	"strings"
)

// classify turns a complete response into a success or an *Error.
func (c *Client) classify(r request, resp *http.Response, body []byte) (*response, error) {
	env, decErr := decodeEnvelope(body)
	e := &Error{Op: r.op, HTTPStatus: resp.StatusCode}
	if env != nil {
		e.Code = int(env.Code.N)
		e.Status = c.clean(string(env.Status))
		e.Message = c.clean(string(env.Message))
		e.ErrorText = c.clean(string(env.Error))
		e.UUID = c.clean(string(env.UUID))
	} else {
		e.Message = c.clean(string(body))
	}
	get := r.method == http.MethodGet
	unsafe := func(k Kind) Kind {
		if r.create {
			return KindOutcomeUnknown
		}
		return k
	}
	text := strings.ToLower(e.Message + " " + e.ErrorText)
	st := resp.StatusCode

	switch {
	case st >= 300 && st < 400:
		e.Kind = unsafe(KindRejected)
		e.Err = fmt.Errorf("%w: HTTP %d to %q", ErrRedirect, st, c.clean(resp.Header.Get("Location")))
	case st == http.StatusTooManyRequests:
		e.Kind = KindRateLimited
		e.RetryAfter = c.retryAfter(resp.Header.Get("Retry-After"))
	case st == http.StatusUnauthorized || st == http.StatusForbidden:
		e.Kind = KindUnauthorized
	case st >= 500, st == http.StatusRequestTimeout:
		e.Kind = unsafe(KindRetryable)
	case st == http.StatusNotFound && get:
		switch {
		case env.fromService() && !notFoundExcluded(text), env != nil && aboutNotFound(text):
			e.Kind = KindNotFound
		default:
			// A 404 without the service's envelope says nothing about the payout: a proxy, a
			// wrong base URL, or a web framework's own JSON for an unknown route
			// ({"detail":"Not Found"}, {"message":"Not Found."}).
			e.Kind = KindRetryable
		}
	case st == http.StatusNotFound && r.create:
		// The create endpoint itself is missing (wrong base URL?): nothing was created, but
		// this is not a refusal of this payout, so it gets its own kind.
		e.Kind = KindNotFound
	case st >= 400:
		switch {
		case aboutAuth(text):
			e.Kind = KindUnauthorized
		case r.create && (st == http.StatusConflict || aboutDuplicate(text)):
			e.Kind = KindDuplicate
		case get && env != nil && aboutNotFound(text):
			e.Kind = KindNotFound
		default:
			e.Kind = KindRejected
		}
	case st < 200:
		e.Kind = unsafe(KindRetryable)
		e.Err = ErrBadResponse
	default: // 2xx
		if decErr != nil {
			e.Kind = unsafe(KindRetryable)
			e.Err = decErr
			return nil, e
		}
		switch env.verdict() {
		case verdictOK:
			return &response{status: st, env: env}, nil
		case verdictAmbiguous:
			e.Kind = unsafe(KindRetryable)
			e.Err = fmt.Errorf("%w: envelope neither ok nor fail", ErrBadResponse)
		case verdictFail:
			c.classifyFail(r, e, text, resp)
		}
	}
	return nil, e
}

// classifyFail classifies a 2xx response whose envelope says fail.
func (c *Client) classifyFail(r request, e *Error, text string, resp *http.Response) {
	code := e.Code
	switch {
	case code == 401 || code == 403 || aboutAuth(text):
		e.Kind = KindUnauthorized
	case code == 429:
		e.Kind = KindRateLimited
		e.RetryAfter = c.retryAfter(resp.Header.Get("Retry-After"))
	case code >= 500 && code < 600:
		// The service says it failed internally: for a create that is not a clear refusal.
		if r.create {
			e.Kind = KindOutcomeUnknown
		} else {
			e.Kind = KindRetryable
		}
	case r.create:
		if code == 409 || aboutDuplicate(text) {
			e.Kind = KindDuplicate
		} else {
			e.Kind = KindRejected
		}
	case r.method == http.MethodGet:
		if (code == 404 && !notFoundExcluded(text)) || aboutNotFound(text) {
			e.Kind = KindNotFound
		} else {
			// Ambiguous: calling it not found could lead to paying twice.
			e.Kind = KindRetryable
		}
	default:
		e.Kind = KindRetryable
	}
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func aboutAuth(text string) bool {
	return containsAny(text, "token", "unauthori", "unauthenticated", "authenticat", "forbidden",
		"credential", "api key", "apikey", "access denied")
}

func aboutDuplicate(text string) bool {
	return containsAny(text, "duplicate", "already exist", "already used", "already been used",
		"already taken", "already in use", "already submitted", "already been submitted")
}

// notFoundExcluded reports text that may be about something other than the payout (the route,
// the merchant), so that "not found" must not be read as "no such payout".
func notFoundExcluded(text string) bool {
	return containsAny(text, "merchant", "route", "endpoint", "url", "path", "page", "method",
		"service", "pool", "provider", "token", "auth")
}

// aboutNotFound is deliberately narrow: it needs a not-found phrase and a word naming the payout.
func aboutNotFound(text string) bool {
	if notFoundExcluded(text) {
		return false
	}
	phrase := containsAny(text, "not found", "not exist", "doesn't exist", "no record", "no such",
		"could not find", "cannot find", "can't find", "unable to find")
	subject := containsAny(text, "payout", "invoice", "reference", "record", "transaction")
	return phrase && subject
}
