package api

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
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
