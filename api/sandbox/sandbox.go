// Package sandbox is an in-memory simulator of the Merchant Payout Service, an http.Handler that
// serves its three endpoints with their envelope, settles payouts after a delay, sends signed
// callbacks and injects seeded faults (latency, 5xx, lost responses, 429), so that the client and
// the runner can be run and tested on one machine. It also records every payout it created, so a
// test can prove that nothing was paid twice.
package sandbox

import (
	"context"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
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

// Options configure a Server. The zero value works except for AuthToken (empty: every request is
// refused) and HashKey (empty: no callback can be signed).
type Options struct {
	AuthToken string
	HashKey   []byte
	Providers []api.Provider // nil: DefaultProviders()
	Seed      int64
	Now       func() time.Time // nil: time.Now
	// After is what the sandbox's waits (the injected latency, the pause between a callback's
	// tries) wait on, as time.After does (nil: the system's timers): a test that gives Now a fake
	// clock gives it that clock's timers too, so that the latency passes in the test's time,
	// where its rate is measured.
	After func(d time.Duration) <-chan time.Time
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
	// DisplayNames sets the display_name of a payout's callback, the name the bank holds for the
	// account, by external_invoice_ref or by account number (the reference wins). Any other
	// payout's callback carries its recipient_reference in capitals.
	DisplayNames map[string]string
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
	pending  dueQueue // the PENDING records, first due first
	byInv    map[string]*Record
	byRef    map[string][]*Record
	seq      int
	stats    Stats
	window   int64 // unix second of the current rate window
	inWindow int
	recent   []time.Time // arrivals of the last second, oldest first
	inFlight int         // API requests being served
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
	s.opts.DisplayNames = maps.Clone(opts.DisplayNames)
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
// answering; payouts then settle only on reads and Settle.
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

// ServeHTTP serves the API under PathPrefix and the inspection endpoints under /_sandbox/, which
// need no auth-token and see no faults.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.serveInspection(w, r) {
		return
	}
	defer s.enter()()
	endpoint := endpointOf(r.URL.Path)
	uuid := s.uuid()
	if s.answerFault(w, r, uuid, s.drawFaults(endpoint)) {
		return
	}
	if !s.authorized(r) {
		s.mu.Lock()
		s.stats.Unauthorized++
		s.mu.Unlock()
		s.fail(w, uuid, http.StatusUnauthorized, CodeUnauthorized, "invalid auth-token", "")
		return
	}
	s.route(w, r, uuid)
}

// enter counts an API request in flight, and the most ever at once; the returned function
// counts it out.
func (s *Server) enter() func() {
	s.mu.Lock()
	s.inFlight++
	s.stats.MaxInFlight = max(s.stats.MaxInFlight, s.inFlight)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}
}

// route hands an authorized API request to its endpoint, checking the method each one takes.
func (s *Server) route(w http.ResponseWriter, r *http.Request, uuid string) {
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
