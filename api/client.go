package api

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
)

// Defaults for Config.
const (
	DefaultTimeout          = 30 * time.Second
	DefaultMaxConns         = 4
	DefaultMaxResponseBytes = 4 << 20
	DefaultUserAgent        = "payout/1 (+https://github.com/payout/payout)"
	// DefaultRetryAfter is the wait reported for a 429 without a usable Retry-After.
	DefaultRetryAfter = time.Second
	// MaxProviderPages bounds List Payout Providers when it follows pages.
	MaxProviderPages = 50

	dialTimeout = 10 * time.Second
	tlsTimeout  = 10 * time.Second
)

// Paths of the service's endpoints, under the base URL.
const (
	PathListProviders = "/api/v1/merchant/list-payout-providers"
	PathPayout        = "/api/v1/merchant/payout"
)

// Config configures a Client. Zero values take the defaults above.
type Config struct {
	BaseURL   string        // https, or http on a loopback host
	AuthToken string        // sent as the auth-token header; never logged
	Timeout   time.Duration // whole request, including reading the body
	MaxConns  int           // concurrent requests expected (workers); idle connections kept per host
	UserAgent string
	// MaxResponseBytes caps a response body; a longer one is an error (ErrBodyTooLarge).
	MaxResponseBytes int64
	// Now is the clock used to turn a Retry-After date into a wait. Default time.Now.
	Now func() time.Time
}

// Client calls the Merchant Payout Service. It is safe for concurrent use.
type Client struct {
	base    *url.URL
	token   string
	ua      string
	maxBody int64
	now     func() time.Time
	hc      *http.Client
	tr      *http.Transport
}

// NewClient validates cfg and returns a Client with its own http.Client. Errors are
// *ConfigError naming the field.
func NewClient(cfg Config) (*Client, error) {
	u, err := checkBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(cfg.AuthToken) == "" {
		return nil, &ConfigError{Field: "AuthToken", Err: ErrMissing}
	}
	if strings.ContainsAny(cfg.AuthToken, "\r\n") {
		return nil, &ConfigError{Field: "AuthToken", Err: ErrInvalid}
	}
	if cfg.Timeout < 0 {
		return nil, &ConfigError{Field: "Timeout", Value: cfg.Timeout.String(), Err: ErrInvalid}
	}
	if cfg.MaxConns < 0 {
		return nil, &ConfigError{Field: "MaxConns", Value: strconv.Itoa(cfg.MaxConns), Err: ErrInvalid}
	}
	if cfg.MaxResponseBytes < 0 {
		return nil, &ConfigError{Field: "MaxResponseBytes", Value: strconv.FormatInt(cfg.MaxResponseBytes, 10), Err: ErrInvalid}
	}
	timeout := orDefault(cfg.Timeout, DefaultTimeout)
	maxConns := orDefault(cfg.MaxConns, DefaultMaxConns)
	c := &Client{
		base:    u,
		token:   cfg.AuthToken,
		ua:      cfg.UserAgent,
		maxBody: orDefault(cfg.MaxResponseBytes, DefaultMaxResponseBytes),
		now:     cfg.Now,
	}
	if c.ua == "" {
		c.ua = DefaultUserAgent
	}
	if c.now == nil {
		c.now = time.Now
	}
	dialer := &net.Dialer{Timeout: min(dialTimeout, timeout), KeepAlive: 30 * time.Second}
	c.tr = &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         dialer.DialContext,
		TLSHandshakeTimeout: min(tlsTimeout, timeout),
		TLSClientConfig:     &tls.Config{MinVersion: tls.VersionTLS12},
		// Without this a pool of workers opens and closes a socket per request once more than
		// two run at a time (Go's default), filling the host with TIME_WAIT sockets.
		MaxIdleConns:          max(100, maxConns),
		MaxIdleConnsPerHost:   maxConns,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: timeout,
		ExpectContinueTimeout: time.Second,
		ForceAttemptHTTP2:     true,
	}
	c.hc = &http.Client{
		Transport: c.tr,
		Timeout:   timeout,
		// A 307/308 would make the transport send the POST again elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c, nil
}

func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// CloseIdleConnections closes the client's idle keep-alive connections.
func (c *Client) CloseIdleConnections() { c.tr.CloseIdleConnections() }

func checkBaseURL(raw string) (*url.URL, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, &ConfigError{Field: "BaseURL", Err: ErrMissing}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return nil, &ConfigError{Field: "BaseURL", Value: redactURL(raw), Err: ErrInvalidURL}
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		// Credentials belong in the auth token; a query would be lost when paths are joined.
		return nil, &ConfigError{Field: "BaseURL", Value: redactURL(raw), Err: fmt.Errorf("%w: no user info, query or fragment allowed", ErrInvalidURL)}
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !isLoopback(u.Hostname()) {
			return nil, &ConfigError{Field: "BaseURL", Value: raw, Err: ErrInsecureURL}
		}
	default:
		return nil, &ConfigError{Field: "BaseURL", Value: raw, Err: fmt.Errorf("%w: scheme must be https", ErrInvalidURL)}
	}
	return u, nil
}

func redactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return "(unparsable)"
}

func isLoopback(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

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
		if env != nil && !notFoundExcluded(text) {
			e.Kind = KindNotFound
		} else {
			// A 404 without the service's envelope (a proxy, a wrong base URL) says nothing
			// about the payout.
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

// ListProviders returns the payout providers. If data.list.record_total says there are more
// providers than the first answer holds, it asks for the following pages (DataTables style:
// draw, start, length, page in a JSON body) and stops as soon as a page adds no new provider, a
// follow-up page fails, or MaxProviderPages is reached. A service that ignores page parameters
// therefore costs one extra request, never a loop.
func (c *Client) ListProviders(ctx context.Context) ([]Provider, error) {
	const op = "list providers"
	page, err := c.providerPage(ctx, op, nil)
	if err != nil {
		return nil, err
	}
	out := page.providers
	seen := make(map[Provider]bool, len(out))
	for _, p := range out {
		seen[p] = true
	}
	pageSize := len(page.providers)
	draw := page.draw
	for n := 2; n <= MaxProviderPages && page.total > len(out) && pageSize > 0; n++ {
		draw++
		body, _ := json.Marshal(map[string]int{"draw": draw, "start": len(out), "length": pageSize, "page": n})
		next, err := c.providerPage(ctx, op, body)
		if err != nil {
			// The service documents no paging; a refusal of page parameters means it has none.
			break
		}
		added := 0
		for _, p := range next.providers {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
				added++
			}
		}
		if added == 0 {
			break
		}
	}
	return out, nil
}

type providerPage struct {
	providers []Provider
	total     int
	draw      int
}

func (c *Client) providerPage(ctx context.Context, op string, body []byte) (providerPage, error) {
	res, err := c.do(ctx, request{op: op, method: http.MethodPost, path: PathListProviders, body: body})
	if err != nil {
		return providerPage{}, err
	}
	page, err := decodeProviders(res.env.Data)
	if err != nil {
		return providerPage{}, &Error{Op: op, HTTPStatus: res.status, Code: int(res.env.Code.N),
			Status: c.clean(string(res.env.Status)), UUID: c.clean(string(res.env.UUID)),
			Kind: KindRetryable, Err: err}
	}
	return page, nil
}

// decodeProviders accepts data.list.data (documented), data.list as an array, or data as an
// array.
func decodeProviders(data json.RawMessage) (providerPage, error) {
	t := bytes.TrimSpace(data)
	if isNull(t) {
		return providerPage{}, fmt.Errorf("%w: %w", ErrBadResponse, errNoData)
	}
	if t[0] == '[' {
		var ps []Provider
		if err := json.Unmarshal(t, &ps); err != nil {
			return providerPage{}, fmt.Errorf("%w: providers: %v", ErrBadResponse, err)
		}
		return providerPage{providers: ps, total: len(ps)}, nil
	}
	var d struct {
		List json.RawMessage `json:"list"`
	}
	if err := json.Unmarshal(t, &d); err != nil {
		return providerPage{}, fmt.Errorf("%w: providers: %v", ErrBadResponse, err)
	}
	l := bytes.TrimSpace(d.List)
	if isNull(l) {
		return providerPage{}, fmt.Errorf("%w: no data.list", ErrBadResponse)
	}
	if l[0] == '[' {
		return decodeProviders(l)
	}
	var list struct {
		Draw        flexInt         `json:"draw"`
		RecordTotal flexInt         `json:"record_total"`
		Data        json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(l, &list); err != nil {
		return providerPage{}, fmt.Errorf("%w: data.list: %v", ErrBadResponse, err)
	}
	var ps []Provider
	if !isNull(list.Data) {
		if err := json.Unmarshal(list.Data, &ps); err != nil {
			return providerPage{}, fmt.Errorf("%w: data.list.data: %v", ErrBadResponse, err)
		}
	}
	return providerPage{providers: ps, total: int(list.RecordTotal.N), draw: int(list.Draw.N)}, nil
}

// CreateResult is what Create Payout answered. The service does not document this answer, so
// every field may be empty: when InvoiceNo is empty, look the payout up by external_invoice_ref.
type CreateResult struct {
	InvoiceNo         string          // payout_invoice_no or invoice_no, if sent
	TransactionStatus string          // transaction_status, if sent
	Raw               json.RawMessage // the envelope's data as received (may be null)
	Payout            *Payout         // data decoded as a payout, if it looked like one
}

// CreatePayout submits one payout. It sends the request exactly once: it never retries and never
// follows redirects. Errors are *Error; KindOutcomeUnknown means the payout may exist.
func (c *Client) CreatePayout(ctx context.Context, p CreatePayoutRequest) (CreateResult, error) {
	const op = "create payout"
	body, err := json.Marshal(p)
	if err != nil {
		return CreateResult{}, &Error{Op: op, Kind: KindRejected, Err: err}
	}
	res, err := c.do(ctx, request{op: op, method: http.MethodPost, path: PathPayout, body: body, create: true})
	if err != nil {
		return CreateResult{}, err
	}
	return decodeCreate(res.env.Data), nil
}

// decodeCreate reads whatever the create answer's data holds; it never fails, because the
// service accepted the payout and the caller must record that.
func decodeCreate(data json.RawMessage) CreateResult {
	r := CreateResult{Raw: data}
	t := bytes.TrimSpace(data)
	if len(t) == 0 || t[0] != '{' {
		return r
	}
	var probe struct {
		Payout json.RawMessage `json:"payout"`
	}
	if json.Unmarshal(t, &probe) == nil && len(bytes.TrimSpace(probe.Payout)) > 0 && bytes.TrimSpace(probe.Payout)[0] == '{' {
		t = bytes.TrimSpace(probe.Payout)
	}
	var p Payout
	if err := json.Unmarshal(t, &p); err != nil {
		// Amounts in an unexpected form: keep at least the identifiers.
		var ids struct {
			PayoutInvoiceNo   flexString `json:"payout_invoice_no"`
			InvoiceNo         flexString `json:"invoice_no"`
			TransactionStatus flexString `json:"transaction_status"`
		}
		if json.Unmarshal(t, &ids) == nil {
			r.InvoiceNo = string(ids.PayoutInvoiceNo)
			if r.InvoiceNo == "" {
				r.InvoiceNo = string(ids.InvoiceNo)
			}
			r.TransactionStatus = normalizeStatus(string(ids.TransactionStatus))
		}
		return r
	}
	r.InvoiceNo = p.PayoutInvoiceNo
	r.TransactionStatus = p.TransactionStatus
	if p.PayoutInvoiceNo != "" || p.ExternalInvoiceRef != "" || p.TransactionStatus != "" || !p.Value.IsZero() {
		r.Payout = &p
	}
	return r
}

// GetPayout reads a payout by its payout_invoice_no or its external_invoice_ref. The reference
// is path-escaped. KindNotFound is returned only when the service says so unambiguously.
func (c *Client) GetPayout(ctx context.Context, reference string) (Payout, error) {
	const op = "get payout"
	if reference == "" {
		return Payout{}, &Error{Op: op, Kind: KindRejected, Err: ErrEmptyReference}
	}
	res, err := c.do(ctx, request{op: op, method: http.MethodGet, path: PathPayout + "/" + escapeSegment(reference)})
	if err != nil {
		return Payout{}, err
	}
	bad := func(err error) error {
		return &Error{Op: op, HTTPStatus: res.status, Code: int(res.env.Code.N),
			Status: c.clean(string(res.env.Status)), UUID: c.clean(string(res.env.UUID)),
			Kind: KindRetryable, Err: err}
	}
	t := bytes.TrimSpace(res.env.Data)
	if isNull(t) || t[0] != '{' {
		return Payout{}, bad(fmt.Errorf("%w: %w", ErrBadResponse, errNoData))
	}
	var p Payout
	if err := json.Unmarshal(t, &p); err != nil {
		return Payout{}, bad(fmt.Errorf("%w: payout: %v", ErrBadResponse, err))
	}
	// "Found" is what stops a payout from being sent again, so an answer must show it is about
	// this reference: an empty object, or another payout, is no answer at all.
	switch {
	case p.PayoutInvoiceNo == "" && p.ExternalInvoiceRef == "":
		return Payout{}, bad(fmt.Errorf("%w: payout has neither invoice number nor reference", ErrBadResponse))
	case p.ExternalInvoiceRef != "" && p.ExternalInvoiceRef != reference && p.PayoutInvoiceNo != reference:
		return Payout{}, bad(fmt.Errorf("%w: asked for %q, the answer is about %q", ErrBadResponse, reference, p.ExternalInvoiceRef))
	}
	return p, nil
}

// escapeSegment escapes a reference as one path segment; "." and ".." are escaped too so that no
// proxy resolves them as relative paths.
func escapeSegment(s string) string {
	if s == "." || s == ".." {
		return strings.Repeat("%2E", len(s))
	}
	return url.PathEscape(s)
}
