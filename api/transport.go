package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
)

// request is one call to the service.
type request struct {
	op     string
	method string
	path   string // escaped path under the base URL
	body   []byte // nil: no body
	// create marks the one request that is not safe to repeat: a failure after it was written
	// has an unknown outcome.
	create bool
}

// response is what came back with a 2xx status and a successful envelope.
type response struct {
	status int
	env    *envelope
}

// do sends r and classifies every failure into an *Error.
func (c *Client) do(ctx context.Context, r request) (*response, error) {
	full := c.base.Scheme + "://" + c.base.Host + strings.TrimRight(c.base.EscapedPath(), "/") + r.path

	var written atomic.Bool
	trace := &httptrace.ClientTrace{
		// Once headers are handed to the connection the service may see the request, so a
		// failure from here on is "maybe sent". Conservative: a partial write counts as sent.
		WroteHeaders: func() { written.Store(true) },
		WroteRequest: func(httptrace.WroteRequestInfo) { written.Store(true) },
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), r.method, full, body)
	if err != nil {
		return nil, &Error{Op: r.op, Kind: KindRejected, Err: err}
	}
	req.Header.Set("auth-token", c.token)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.ua)
	if r.method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}

	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, r, written.Load(), err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBody+1))
	if err != nil {
		e := c.transportError(ctx, r, true, err)
		e.HTTPStatus = resp.StatusCode
		return nil, e
	}
	if int64(len(data)) > c.maxBody {
		e := &Error{Op: r.op, HTTPStatus: resp.StatusCode, Kind: KindRetryable,
			Err: fmt.Errorf("%w: more than %d bytes", ErrBodyTooLarge, c.maxBody)}
		if r.create {
			e.Kind = KindOutcomeUnknown
		}
		return nil, e
	}
	return c.classify(r, resp, data)
}

// transportError classifies a failure without a complete response.
func (c *Client) transportError(ctx context.Context, r request, written bool, err error) *Error {
	e := &Error{Op: r.op, Kind: KindRetryable, Err: err}
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		e.Err = fmt.Errorf("%w: %w", ctxErr, err)
	}
	if r.create && written {
		e.Kind = KindOutcomeUnknown
	}
	return e
}

// retryAfter parses Retry-After as seconds or an HTTP date.
func (c *Client) retryAfter(h string) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return DefaultRetryAfter
	}
	if s, err := strconv.ParseInt(h, 10, 64); err == nil {
		if s < 0 {
			return DefaultRetryAfter
		}
		return time.Duration(min(s, 24*3600)) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(t.Sub(c.now()), 0)
	}
	return DefaultRetryAfter
}

// clean makes service text safe for one log line: no auth token, no control characters, at
// most 300 runes.
func (c *Client) clean(s string) string {
	if s == "" {
		return ""
	}
	s = strings.ReplaceAll(s, c.token, "[redacted]")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "..."
	}
	return s
}
