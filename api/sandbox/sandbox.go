// Package sandbox is an in-memory simulator of the Merchant Payout Service, an http.Handler that
// serves its three endpoints with their envelope, settles payouts after a delay, sends signed
// callbacks and injects seeded faults (latency, 5xx, lost responses, 429), so that the client and
// the runner can be run and tested on one machine. It also records every payout it created, so a
// test can prove that nothing was paid twice.
package sandbox

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/api"
)

// Paths served by the sandbox.
const (
	PathPrefix        = "/api/v1/merchant/"
	PathProviders     = PathPrefix + "list-payout-providers"
	PathPayout        = PathPrefix + "payout"
	PathInspectPayout = "/_sandbox/payouts"
	PathInspectCreate = "/_sandbox/creates"
	PathInspectStats  = "/_sandbox/stats"
)

// Envelope codes the sandbox answers with.
const (
	CodeOK           = 200  // list providers, create payout
	CodeGetOK        = 2000 // get payout
	CodeValidation   = 1234 // a refused create body (the documented sample failure code)
	CodeUnauthorized = 401
	CodeNotFound     = 404
	CodeDuplicate    = 409
	CodeRateLimited  = 429
	CodeUnavailable  = 503
)

// Defaults.
const (
	DefaultSettleInterval = 100 * time.Millisecond // settle loop tick when SettleAfter is small
	DefaultCallbackTries  = 3
	maxBodyBytes          = 64 << 10
)

// DefaultMaxAmount is the largest amount a create accepts when Options.MaxAmount is zero.
var DefaultMaxAmount = decimal.NewFromInt(1_000_000)

// DefaultFailSuffixes is the conventional failure rule (accounts ending in "000" fail). It is NOT
// applied unless set in Options.FailSuffixes: by default every payout succeeds.
var DefaultFailSuffixes = []string{"000"}

// DuplicatePolicy says what a create with an already used external_invoice_ref does.
type DuplicatePolicy int

const (
	// AllowDuplicates creates a second payout (pays again). The default, so that tests prove the
	// client never pays twice rather than the sandbox saving it.
	AllowDuplicates DuplicatePolicy = iota
	// RejectDuplicates refuses the create with HTTP 409 and a fail envelope.
	RejectDuplicates
)

// Faults are the injected faults. Rates are shares in [0, 1], drawn from a generator seeded by
// Options.Seed, so a sequence of requests sees the same faults on every run.
type Faults struct {
	Latency       time.Duration // added to every API request
	LatencyJitter time.Duration // plus a seeded random share of this
	// ErrorRate is the share of API requests answered 503 before anything is done (nothing created).
	ErrorRate float64
	// LostResponseRate is the share of valid creates whose payout IS created but whose response
	// never arrives: the connection is closed without an answer.
	LostResponseRate float64
	// RateLimit is the number of requests per second (a window of one second of Options.Now) above
	// which the sandbox answers 429 with Retry-After. 0: no limit.
	RateLimit float64
	// ThrottleLookups is the share of Get Payout requests answered 429, whatever the rate, with
	// a Retry-After of ThrottleRetryAfter (whole seconds; 0 sends "Retry-After: 0").
	ThrottleLookups    float64
	ThrottleRetryAfter time.Duration
	// ThrottleRate is the share of API requests of any endpoint answered 429 with a Retry-After
	// of ThrottleRetryAfter, whatever the rate: a front end shedding load now and then.
	ThrottleRate float64
	// FailAfterCreateRate is the share of valid creates whose payout IS created but which are
	// answered HTTP 200 with a fail envelope, as a refusal: the service contradicting itself.
	FailAfterCreateRate float64
}

// Options configure a Server. The zero value works except for AuthToken (empty: every request is
// refused) and HashKey (empty: no callback can be signed).
type Options struct {
	AuthToken string
	HashKey   []byte
	Providers []api.Provider // nil: DefaultProviders()
	Seed      int64
	Now       func() time.Time // nil: time.Now
	// SettleAfter is how long a payout stays PENDING. 0: it is final on the next read or settle.
	SettleAfter time.Duration
	// FailAccounts decides which payouts end FAILED; if nil, FailSuffixes does (an account ending
	// in one of them fails). Both nil: every payout succeeds.
	FailAccounts    func(account string) bool
	FailSuffixes    []string
	DuplicatePolicy DuplicatePolicy
	// OmitInvoiceInCreate answers a successful create with data null, to exercise a client that
	// must then find the payout by external_invoice_ref.
	OmitInvoiceInCreate bool
	MaxAmount           decimal.Decimal // zero: DefaultMaxAmount
	Faults              Faults
	// SendCallbacks posts the signed callback to client_callback_url (http or https only) when a
	// payout succeeds.
	SendCallbacks  bool
	CallbackClient *http.Client // nil: a client with a 5 s timeout
	CallbackTries  int          // 0: DefaultCallbackTries
	// SettleInterval is the tick of the background settle loop. 0: SettleAfter/4 bounded to
	// [10ms, 1s]; negative: no loop (settle only on reads and Settle).
	SettleInterval time.Duration
	Logger         *slog.Logger // nil: discard
}

// Record is a payout the sandbox created.
type Record struct {
	ExternalInvoiceRef string          `json:"external_invoice_ref"`
	InvoiceNo          string          `json:"payout_invoice_no"`
	Amount             decimal.Decimal `json:"amount"`
	Account            string          `json:"third_party_account_no"`
	ProviderID         int64           `json:"payout_service_id"`
	RecipientReference string          `json:"recipient_reference"`
	Description        string          `json:"payment_description"`
	VirtualPool        string          `json:"virtual_pool_reference"`
	CallbackURL        string          `json:"client_callback_url"`
	Status             string          `json:"transaction_status"`
	CreatedAt          time.Time       `json:"created_at"`
	SettledAt          time.Time       `json:"settled_at,omitzero"`
	BankReferenceNo    string          `json:"bank_reference_no,omitempty"`
	// ResponseLost: the create was answered by closing the connection.
	ResponseLost bool `json:"response_lost"`
}

// Stats count what the sandbox saw.
type Stats struct {
	Requests         map[string]int `json:"requests"` // by endpoint: providers, create, get, other
	Creates          int            `json:"creates"`  // payouts created, lost responses included
	Rejected         int            `json:"rejected"` // creates refused (validation, duplicate)
	Unauthorized     int            `json:"unauthorized"`
	RateLimited      int            `json:"rate_limited"`  // 429s
	ServerErrors     int            `json:"server_errors"` // 5xx (injected or down)
	Lost             int            `json:"lost"`          // responses lost after creating
	Callbacks        int            `json:"callbacks"`     // callbacks delivered (2xx)
	CallbackFailures int            `json:"callback_failures"`
	MaxPerSecond     int            `json:"max_per_second"`
	// MaxInAnySecond is the most API requests that arrived within one second, wherever that
	// second starts: the bound a client's rate limit must keep.
	MaxInAnySecond int `json:"max_in_any_second"`
}

// Server is the simulator. It is safe for concurrent use.
type Server struct {
	opts     Options
	log      *slog.Logger
	now      func() time.Time
	fails    func(string) bool
	provByID map[int64]api.Provider
	cbClient *http.Client

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	closed   bool // no callback goroutine starts once set
	faults   Faults
	down     bool
	rng      *rand.Rand // faults
	idRng    *rand.Rand // uuids: separate so ids do not shift the fault pattern
	records  []*Record
	pending  []*Record // the PENDING records, so that settling costs what is pending, not all
	byInv    map[string]*Record
	byRef    map[string][]*Record
	seq      int
	stats    Stats
	window   int64 // unix second of the current rate window
	inWindow int
	recent   []time.Time // arrivals of the last second, oldest first
}

// New returns a running Server; Close stops its goroutines.
func New(opts Options) *Server {
	s := &Server{opts: opts, log: opts.Logger, now: opts.Now, cbClient: opts.CallbackClient}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.opts.Providers == nil {
		s.opts.Providers = DefaultProviders()
	}
	if s.opts.MaxAmount.IsZero() {
		s.opts.MaxAmount = DefaultMaxAmount
	}
	if s.opts.CallbackTries <= 0 {
		s.opts.CallbackTries = DefaultCallbackTries
	}
	if s.cbClient == nil {
		s.cbClient = &http.Client{Timeout: 5 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	s.fails = opts.FailAccounts
	if s.fails == nil {
		suffixes := slices.Clone(opts.FailSuffixes)
		s.fails = func(account string) bool {
			for _, sfx := range suffixes {
				if sfx != "" && strings.HasSuffix(account, sfx) {
					return true
				}
			}
			return false
		}
	}
	s.provByID = make(map[int64]api.Provider, len(s.opts.Providers))
	for _, p := range s.opts.Providers {
		s.provByID[p.ID] = p
	}
	seed := uint64(opts.Seed)
	s.rng = rand.New(rand.NewPCG(seed, 0x5eed_fa17))
	s.idRng = rand.New(rand.NewPCG(seed, 0x1d5))
	s.faults = opts.Faults
	s.byInv = make(map[string]*Record)
	s.byRef = make(map[string][]*Record)
	s.stats.Requests = make(map[string]int)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if iv := s.settleInterval(); iv > 0 {
		s.wg.Add(1)
		go s.settleLoop(iv)
	}
	return s
}

func (s *Server) settleInterval() time.Duration {
	iv := s.opts.SettleInterval
	if iv < 0 {
		return 0
	}
	if iv == 0 {
		iv = min(max(s.opts.SettleAfter/4, 10*time.Millisecond), time.Second)
	}
	return iv
}

func (s *Server) settleLoop(iv time.Duration) {
	defer s.wg.Done()
	t := time.NewTicker(iv)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
			s.Settle()
		}
	}
}

// Close stops the settle loop and pending callbacks and waits for them. The handler keeps
// answering, but no longer settles in the background.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
}

// SetFaults replaces the injected faults at run time.
func (s *Server) SetFaults(f Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = f
}

// SetDown takes the service down (every API request answered 503) or brings it back.
func (s *Server) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// Settle makes final every PENDING payout whose SettleAfter has passed by Options.Now, and sends
// the callbacks of those that succeeded. Tests call it instead of sleeping.
func (s *Server) Settle() {
	s.mu.Lock()
	due := s.settleLocked(s.now())
	s.mu.Unlock()
	s.sendCallbacks(due)
}

// settleLocked settles what is due and returns copies of the records that succeeded.
func (s *Server) settleLocked(now time.Time) []Record {
	var succeeded []Record
	kept := s.pending[:0]
	for _, r := range s.pending {
		if now.Before(r.CreatedAt.Add(s.opts.SettleAfter)) {
			kept = append(kept, r)
			continue
		}
		r.SettledAt = now
		if s.fails(r.Account) {
			r.Status = api.StatusFailed
			continue
		}
		r.Status = api.StatusSuccess
		r.BankReferenceNo = "BR" + strings.TrimPrefix(r.InvoiceNo, "POI")
		succeeded = append(succeeded, *r)
	}
	clear(s.pending[len(kept):])
	s.pending = kept
	return succeeded
}

// Payouts returns every payout created, in creation order, after settling what is due.
func (s *Server) Payouts() []Record {
	s.mu.Lock()
	due := s.settleLocked(s.now())
	out := make([]Record, len(s.records))
	for i, r := range s.records {
		out[i] = *r
	}
	s.mu.Unlock()
	s.sendCallbacks(due)
	return out
}

// CreateCounts returns, per external_invoice_ref, how many payouts were created with it (creates
// whose response was lost included; refused creates not).
func (s *Server) CreateCounts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.byRef))
	for ref, rs := range s.byRef {
		out[ref] = len(rs)
	}
	return out
}

// Duplicates returns the sorted external_invoice_refs with more than one payout created.
func (s *Server) Duplicates() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for ref, rs := range s.byRef {
		if len(rs) > 1 {
			out = append(out, ref)
		}
	}
	slices.Sort(out)
	return out
}

// Stats returns a copy of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Requests = make(map[string]int, len(s.stats.Requests))
	for k, v := range s.stats.Requests {
		st.Requests[k] = v
	}
	return st
}

// MaxPerSecond returns the most API requests seen in one second of Options.Now.
func (s *Server) MaxPerSecond() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats.MaxPerSecond
}

// ServeHTTP serves the API under PathPrefix and the inspection endpoints under /_sandbox/, which
// need no auth-token and see no faults.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case PathInspectPayout:
		s.inspect(w, r, func() any { return s.Payouts() })
		return
	case PathInspectCreate:
		s.inspect(w, r, func() any {
			return map[string]any{"counts": s.CreateCounts(), "duplicates": orEmpty(s.Duplicates())}
		})
		return
	case PathInspectStats:
		s.inspect(w, r, func() any { return s.Stats() })
		return
	}
	endpoint := endpointOf(r.URL.Path)
	uuid := s.uuid()

	// Faults, in the order a real front end would meet them.
	s.mu.Lock()
	s.stats.Requests[endpoint]++
	f, down := s.faults, s.down
	limited := s.countLocked() && !down // a service that is down does not rate limit
	throttled := !limited && !down && s.throttledLocked(f, endpoint)
	var delay time.Duration
	var injected bool
	if !limited && !down {
		delay = f.Latency
		if f.LatencyJitter > 0 {
			delay += time.Duration(s.rng.Int64N(int64(f.LatencyJitter)))
		}
		injected = f.ErrorRate > 0 && s.rng.Float64() < f.ErrorRate
	}
	switch {
	case limited, throttled:
		s.stats.RateLimited++
	case down || injected:
		s.stats.ServerErrors++
	}
	s.mu.Unlock()

	if down {
		s.fail(w, uuid, http.StatusServiceUnavailable, CodeUnavailable, "service unavailable", "")
		return
	}
	if limited {
		w.Header().Set("Retry-After", "1")
		s.fail(w, uuid, http.StatusTooManyRequests, CodeRateLimited, "too many requests", "")
		return
	}
	if throttled {
		w.Header().Set("Retry-After", strconv.Itoa(int(f.ThrottleRetryAfter/time.Second)))
		s.fail(w, uuid, http.StatusTooManyRequests, CodeRateLimited, "too many requests", "")
		return
	}
	if delay > 0 && !s.sleep(r.Context(), delay) {
		return
	}
	if injected {
		s.fail(w, uuid, http.StatusServiceUnavailable, CodeUnavailable, "service temporarily unavailable", "")
		return
	}
	if !s.authorized(r) {
		s.mu.Lock()
		s.stats.Unauthorized++
		s.mu.Unlock()
		s.fail(w, uuid, http.StatusUnauthorized, CodeUnauthorized, "invalid auth-token", "")
		return
	}
	switch {
	case r.URL.Path == PathProviders:
		if r.Method != http.MethodPost {
			s.methodNotAllowed(w, uuid, http.MethodPost)
			return
		}
		s.listProviders(w, uuid)
	case r.URL.Path == PathPayout:
		if r.Method != http.MethodPost {
			s.methodNotAllowed(w, uuid, http.MethodPost)
			return
		}
		s.create(w, r, uuid)
	case strings.HasPrefix(r.URL.Path, PathPayout+"/"):
		if r.Method != http.MethodGet {
			s.methodNotAllowed(w, uuid, http.MethodGet)
			return
		}
		s.get(w, r, uuid)
	default:
		s.fail(w, uuid, http.StatusNotFound, CodeNotFound, "not found", "")
	}
}

func endpointOf(path string) string {
	switch {
	case path == PathProviders:
		return "providers"
	case path == PathPayout:
		return "create"
	case strings.HasPrefix(path, PathPayout+"/"):
		return "get"
	}
	return "other"
}

// countLocked counts the request in its one-second window and reports whether it is over the
// rate limit.
func (s *Server) countLocked() bool {
	now := s.now()
	sec := now.Unix()
	if sec != s.window {
		s.window, s.inWindow = sec, 0
	}
	s.inWindow++
	s.stats.MaxPerSecond = max(s.stats.MaxPerSecond, s.inWindow)
	s.countRecentLocked(now)
	if s.faults.RateLimit <= 0 {
		return false
	}
	return float64(s.inWindow) > s.faults.RateLimit
}

// countRecentLocked keeps the arrivals of the last second, (now-1s, now], and the most of them
// ever seen at once.
func (s *Server) countRecentLocked(now time.Time) {
	cut := now.Add(-time.Second)
	old := 0
	for old < len(s.recent) && !s.recent[old].After(cut) {
		old++
	}
	s.recent = append(s.recent[old:], now)
	s.stats.MaxInAnySecond = max(s.stats.MaxInAnySecond, len(s.recent))
}

// throttledLocked draws whether a request is answered 429 whatever the rate.
func (s *Server) throttledLocked(f Faults, endpoint string) bool {
	if endpoint == "get" && f.ThrottleLookups > 0 && s.rng.Float64() < f.ThrottleLookups {
		return true
	}
	return f.ThrottleRate > 0 && s.rng.Float64() < f.ThrottleRate
}

func (s *Server) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.ctx.Done():
		return true
	}
}

func (s *Server) authorized(r *http.Request) bool {
	got := r.Header.Get("auth-token")
	return s.opts.AuthToken != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.opts.AuthToken)) == 1
}

func (s *Server) uuid() string {
	s.mu.Lock()
	hi, lo := s.idRng.Uint64(), s.idRng.Uint64()
	s.mu.Unlock()
	var b [16]byte
	for i := range 8 {
		b[i], b[8+i] = byte(hi>>(8*i)), byte(lo>>(8*i))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

type envelope struct {
	Status  string  `json:"status"`
	Code    int     `json:"code"`
	Data    any     `json:"data"`
	UUID    string  `json:"uuid"`
	Message *string `json:"message"`
	Error   *string `json:"error"`
}

func (s *Server) write(w http.ResponseWriter, httpStatus int, env envelope) {
	b, err := json.Marshal(env)
	if err != nil {
		s.log.Error("sandbox: encode response", "err", err)
		http.Error(w, "encode response", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(httpStatus)
	_, _ = w.Write(b)
}

func (s *Server) ok(w http.ResponseWriter, uuid string, code int, data any) {
	s.write(w, http.StatusOK, envelope{Status: "ok", Code: code, Data: data, UUID: uuid})
}

func (s *Server) fail(w http.ResponseWriter, uuid string, httpStatus, code int, msg, detail string) {
	env := envelope{Status: "fail", Code: code, UUID: uuid, Message: &msg}
	if detail != "" {
		env.Error = &detail
	}
	s.write(w, httpStatus, env)
}

func (s *Server) methodNotAllowed(w http.ResponseWriter, uuid, allow string) {
	w.Header().Set("Allow", allow)
	s.fail(w, uuid, http.StatusMethodNotAllowed, http.StatusMethodNotAllowed, "method not allowed", "")
}

func (s *Server) inspect(w http.ResponseWriter, r *http.Request, body func() any) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	b, err := json.Marshal(body())
	if err != nil {
		http.Error(w, "encode", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (s *Server) listProviders(w http.ResponseWriter, uuid string) {
	list := slices.Clone(s.opts.Providers)
	if list == nil {
		list = []api.Provider{}
	}
	s.ok(w, uuid, CodeOK, map[string]any{"list": map[string]any{
		"draw": 1, "record_filtered": len(list), "record_total": len(list), "data": list,
	}})
}

// payoutView is a payout on the wire; value is a JSON number with two decimals.
type payoutView struct {
	Value               json.Number `json:"value"`
	ExternalInvoiceRef  string      `json:"external_invoice_ref"`
	PayoutInvoiceNo     string      `json:"payout_invoice_no"`
	PayoutAccountNumber string      `json:"payout_account_number"`
	CreatedAt           string      `json:"created_at"`
	TransactionStatus   string      `json:"transaction_status"`
}

func viewOf(r *Record) payoutView {
	return payoutView{
		Value: json.Number(r.Amount.StringFixed(2)), ExternalInvoiceRef: r.ExternalInvoiceRef,
		PayoutInvoiceNo: r.InvoiceNo, PayoutAccountNumber: r.Account,
		CreatedAt: r.CreatedAt.UTC().Format(time.RFC3339), TransactionStatus: r.Status,
	}
}

func (s *Server) create(w http.ResponseWriter, r *http.Request, uuid string) {
	req, problems := decodeCreate(r, s.provByID, s.opts.MaxAmount)
	if len(problems) > 0 {
		s.mu.Lock()
		s.stats.Rejected++
		s.mu.Unlock()
		status := http.StatusBadRequest
		if problems[0] == errContentType {
			status = http.StatusUnsupportedMediaType
		}
		s.fail(w, uuid, status, CodeValidation, "validation failed", strings.Join(problems, "; "))
		return
	}
	s.mu.Lock()
	if s.opts.DuplicatePolicy == RejectDuplicates && len(s.byRef[req.ExternalInvoiceRef]) > 0 {
		s.stats.Rejected++
		s.mu.Unlock()
		s.fail(w, uuid, http.StatusConflict, CodeDuplicate, "duplicate external_invoice_ref", "")
		return
	}
	now := s.now()
	s.seq++
	rec := &Record{
		ExternalInvoiceRef: req.ExternalInvoiceRef,
		InvoiceNo:          fmt.Sprintf("POI%s%07d", now.UTC().Format("20060102"), s.seq),
		Amount:             req.Amount, Account: req.ThirdPartyAccountNo, ProviderID: req.PayoutServiceID,
		RecipientReference: req.RecipientReference, Description: req.PaymentDescription,
		VirtualPool: req.VirtualPoolReference, CallbackURL: req.ClientCallbackURL,
		Status: api.StatusPending, CreatedAt: now,
	}
	lost := s.faults.LostResponseRate > 0 && s.rng.Float64() < s.faults.LostResponseRate
	refused := !lost && s.faults.FailAfterCreateRate > 0 && s.rng.Float64() < s.faults.FailAfterCreateRate
	rec.ResponseLost = lost
	s.records = append(s.records, rec)
	s.pending = append(s.pending, rec)
	s.byInv[rec.InvoiceNo] = rec
	s.byRef[rec.ExternalInvoiceRef] = append(s.byRef[rec.ExternalInvoiceRef], rec)
	s.stats.Creates++
	if lost {
		s.stats.Lost++
	}
	view := viewOf(rec)
	s.mu.Unlock()
	s.log.Debug("sandbox: payout created", "ref", rec.ExternalInvoiceRef, "invoice", rec.InvoiceNo, "lost", lost)
	if lost {
		loseResponse(w)
		return
	}
	if refused {
		s.fail(w, uuid, http.StatusOK, CodeValidation, "payout could not be processed", "")
		return
	}
	if s.opts.OmitInvoiceInCreate {
		s.ok(w, uuid, CodeOK, nil)
		return
	}
	s.ok(w, uuid, CodeOK, view)
}

// loseResponse closes the connection without answering: the client sees its request sent and
// no response, as when a response is lost on the way back.
func loseResponse(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

func (s *Server) get(w http.ResponseWriter, r *http.Request, uuid string) {
	ref, err := url.PathUnescape(strings.TrimPrefix(r.URL.EscapedPath(), PathPayout+"/"))
	if err != nil || ref == "" {
		s.fail(w, uuid, http.StatusNotFound, CodeNotFound, "payout not found", "")
		return
	}
	s.mu.Lock()
	due := s.settleLocked(s.now())
	rec := s.byInv[ref]
	if rec == nil && len(s.byRef[ref]) > 0 {
		rec = s.byRef[ref][0]
	}
	var view payoutView
	if rec != nil {
		view = viewOf(rec)
	}
	s.mu.Unlock()
	s.sendCallbacks(due)
	if rec == nil {
		s.fail(w, uuid, http.StatusNotFound, CodeNotFound, "payout not found", "")
		return
	}
	s.ok(w, uuid, CodeGetOK, view)
}

// sendCallbacks posts, in the background, the callback of each succeeded payout.
func (s *Server) sendCallbacks(succeeded []Record) {
	if !s.opts.SendCallbacks {
		return
	}
	for _, rec := range succeeded {
		u, err := url.Parse(rec.CallbackURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			continue
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return
		}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.deliver(rec)
		}()
	}
}

// CallbackPayload returns the callback payload the sandbox sends for a succeeded payout.
func (s *Server) CallbackPayload(rec Record) api.CallbackPayload {
	name := ""
	if p, ok := s.provByID[rec.ProviderID]; ok {
		name = p.Name
	}
	return api.CallbackPayload{
		InvoiceNo: rec.InvoiceNo, InvoiceStatusID: 2, InvoiceStatus: api.StatusSuccess,
		Amount: rec.Amount, PaymentSwitchChargeRate: decimal.Zero, PayoutServiceID: rec.ProviderID,
		ResponseCode: 2100, BankResponseSuccess: true, OrgnFromAccountCurrency: "MYR",
		OrgnThirdPartyAccountNo: rec.Account, OrgnPaymentDescription: rec.Description,
		BizMsgID: "BM" + strings.TrimPrefix(rec.InvoiceNo, "POI"), DisplayName: name,
		BankReferenceNo: rec.BankReferenceNo, OrgnTransactionAmount: rec.Amount.StringFixed(2),
		FromAccountNo: rec.VirtualPool,
	}
}

func (s *Server) deliver(rec Record) {
	body, err := api.SignCallback(s.CallbackPayload(rec), s.opts.HashKey)
	if err != nil {
		s.log.Warn("sandbox: sign callback", "invoice", rec.InvoiceNo, "err", err)
		s.countCallback(false)
		return
	}
	for attempt := range s.opts.CallbackTries {
		if attempt > 0 && !s.sleep(s.ctx, time.Duration(attempt)*100*time.Millisecond) {
			break
		}
		if s.ctx.Err() != nil {
			break
		}
		req, err := http.NewRequestWithContext(s.ctx, http.MethodPost, rec.CallbackURL, strings.NewReader(string(body)))
		if err != nil {
			break
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := s.cbClient.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			_ = resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				s.countCallback(true)
				return
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		s.log.Debug("sandbox: callback attempt failed", "invoice", rec.InvoiceNo, "attempt", attempt+1, "err", err)
	}
	s.countCallback(false)
}

func (s *Server) countCallback(ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ok {
		s.stats.Callbacks++
	} else {
		s.stats.CallbackFailures++
	}
}
