package callbacks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/ledger"
)

// Paths served by Handler.
const (
	Path       = "/callback"
	HealthPath = "/healthz"
)

// DefaultMaxBody caps a callback request body when Config.MaxBody is zero. A callback is one
// short JWT; anything larger is refused with 413 before it is parsed.
const DefaultMaxBody = api.MaxCallbackBytes

// callbackLedgerTimeout bounds the ledger work of one callback; the busy timeout of the ledger
// (a run writing at the same time) fits inside it.
const callbackLedgerTimeout = 30 * time.Second

// Verdicts a verified callback is stored with (ledger.StoredCallback.Verdict).
// The verdicts a callback's payload earns are decided by package outcome.
const (
	VerdictApplied        = outcome.CallbackApplied
	VerdictReplay         = outcome.CallbackReplay
	VerdictUnknownInvoice = "unknown-invoice" // no payout with this invoice_no in the ledger
	// VerdictNotYetRecorded is an unknown invoice while a payout to the callback's account and
	// amount awaits its invoice number (awaited): answered 503, so that the service's next
	// delivery applies it, with its name check, once the number is recorded (by the run that
	// sent it, or by the lookup of a payout whose answer was lost).
	VerdictNotYetRecorded  = "not-yet-recorded"
	VerdictAmountMismatch  = outcome.CallbackAmountMismatch
	VerdictNotSuccess      = outcome.CallbackNotSuccess
	VerdictConflict        = outcome.CallbackConflict
	VerdictReplayMismatch  = outcome.CallbackReplayMismatch
	VerdictUnexpectedState = outcome.CallbackUnexpectedState
)

// Config holds what a Handler needs. Ledger and HashKey are required.
type Config struct {
	Ledger  ledger.CallbackStore // what a callback reads and records, and nothing else
	HashKey []byte               // secret: never logged
	Logger  *slog.Logger
	Now     func() time.Time
	MaxBody int64 // 0: DefaultMaxBody
}

// Handler receives the service's callbacks: POST Path verifies the JWT with the hash key and
// moves the payout found by invoice_no to SUCCEEDED; GET HealthPath answers "ok" while the ledger
// can be read. It is safe for concurrent use.
type Handler struct {
	cfg Config
	log *slog.Logger
}

// NewHandler checks cfg and returns a handler. It refuses a missing ledger and an empty
// hash key (api.ErrEmptyHashKey) now rather than at the first callback.
func NewHandler(cfg Config) (*Handler, error) {
	if cfg.Ledger == nil {
		return nil, errors.New("callback handler: no ledger")
	}
	if err := api.CheckHashKey(cfg.HashKey); err != nil {
		return nil, fmt.Errorf("callback handler: %w", err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	cfg.HashKey = bytes.Clone(cfg.HashKey)
	return &Handler{cfg: cfg, log: cfg.Logger}, nil
}

// callbackAnswer is the JSON body of every answer, shaped like the service's own envelope.
type callbackAnswer struct {
	Status  string `json:"status"` // "ok" or "fail"
	Code    int    `json:"code"`   // the HTTP status
	Message string `json:"message"`
}

// ServeHTTP routes Path and HealthPath; everything else is 404.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case Path:
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			answer(w, http.StatusMethodNotAllowed, "method not allowed")
			return
		}
		h.callback(w, r)
	case HealthPath:
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			answer(w, http.StatusMethodNotAllowed, "method not allowed")
			return
		}
		h.health(w, r)
	default:
		answer(w, http.StatusNotFound, "not found")
	}
}

func answer(w http.ResponseWriter, status int, msg string) {
	a := callbackAnswer{Status: "ok", Code: status, Message: msg}
	if status != http.StatusOK {
		a.Status = "fail"
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(a)
}

// health answers 200 "ok" when the ledger answers a read, 503 otherwise.
func (h *Handler) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	if _, err := h.cfg.Ledger.ChainHead(ctx); err != nil {
		h.log.Error("health: ledger unreachable", "err", err)
		answer(w, http.StatusServiceUnavailable, "ledger unreachable")
		return
	}
	answer(w, http.StatusOK, "ok")
}

func (h *Handler) callback(w http.ResponseWriter, r *http.Request) {
	log := h.log.With("remote", r.RemoteAddr)
	cb, ok := h.verified(w, r, log)
	if !ok {
		return
	}
	log = log.With("invoice", cb.Payload.InvoiceNo)

	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), callbackLedgerTimeout)
	defer cancel()
	// Read before the payout by its invoice: one change of the ledger records a payout's invoice
	// number and ends its wait, so a callback's payout, read in this order, is either found or
	// seen awaiting, never neither.
	awaited, err := h.awaited(ctx, cb.Payload)
	if err != nil {
		unsettled(w, log, err)
		return
	}
	verdict, p, inEvent, err := h.settle(ctx, cb)
	if err != nil {
		unsettled(w, log, err)
		return
	}
	if p.Ref != "" {
		log = log.With("ref", p.Ref)
	}
	if verdict == VerdictUnknownInvoice && awaited {
		verdict = VerdictNotYetRecorded
	}
	if p.Ref != "" && matches(verdict) {
		if err := h.recordName(ctx, log, p, cb.Payload.DisplayName, inEvent); err != nil {
			// The state change is kept; the service's next delivery records the name.
			log.Error("callback: name check", "err", err)
			answer(w, http.StatusServiceUnavailable, "ledger unavailable, try again")
			return
		}
	}
	// What the token's signature covers names a callback, not the body's bytes: the same token
	// again, in whatever envelope, is counted on its first row.
	stored := ledger.StoredCallback{ReceivedAt: h.cfg.Now().UTC(), InvoiceNo: cb.Payload.InvoiceNo, Verdict: verdict,
		TokenSHA256: cb.SignedSHA256}
	if !inEvent {
		// A payload that a payout's event holds, in the audit trail, is not kept twice.
		stored.Payload = string(cb.RawPayload)
	}
	if err := h.cfg.Ledger.StoreCallback(ctx, stored); err != nil {
		if verdict == VerdictUnknownInvoice || verdict == VerdictNotYetRecorded {
			// The stored copy is the only trace of it: let the service retry.
			log.Error("callback: store", "verdict", verdict, "err", err)
			answer(w, http.StatusServiceUnavailable, "ledger unavailable, try again")
			return
		}
		// The payout's event already holds the payload; a lost copy is not worth a retry that
		// would find the same verdict.
		log.Error("callback: store (the payout's event has the payload)", "verdict", verdict, "err", err)
	}
	answerVerdict(w, log, verdict, p, cb.Payload)
}

// verified reads the request's body and verifies its JWT, or answers the refusal and returns
// false.
func (h *Handler) verified(w http.ResponseWriter, r *http.Request, log *slog.Logger) (api.Callback, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.MaxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			log.Warn("callback refused: body too large", "limit", h.cfg.MaxBody)
			answer(w, http.StatusRequestEntityTooLarge, "body too large")
			return api.Callback{}, false
		}
		log.Warn("callback: read body", "err", err)
		answer(w, http.StatusBadRequest, "cannot read body")
		return api.Callback{}, false
	}
	cb, err := api.VerifyCallback(body, h.cfg.HashKey)
	if err != nil {
		// Only the reason is logged: never the body, the token or the error text, which could
		// echo either.
		status, reason := refusal(err)
		log.Warn("callback refused", "status", status, "reason", reason, "bytes", len(body))
		answer(w, status, reason)
		return api.Callback{}, false
	}
	return cb, true
}

// answerVerdict logs what a stored callback's verdict means and answers it: 503 for one whose
// invoice is yet to be recorded, so that it comes again; 200 with the verdict otherwise.
func answerVerdict(w http.ResponseWriter, log *slog.Logger, verdict string, p ledger.Payout, cb api.CallbackPayload) {
	switch verdict {
	case VerdictApplied:
		log.Info("callback applied", "verdict", verdict, "bank_reference_no", cb.BankReferenceNo)
	case VerdictReplay:
		log.Info("callback replayed", "verdict", verdict)
	case VerdictUnknownInvoice:
		log.Warn("callback for an invoice not in the ledger: stored, not applied", "verdict", verdict,
			"callback_amount", cb.Amount.String())
	case VerdictNotYetRecorded:
		log.Warn("callback for an invoice the ledger has yet to record: stored, and the service asked to send it again", "verdict", verdict,
			"callback_amount", cb.Amount.String())
		answer(w, http.StatusServiceUnavailable, "payout not yet recorded, try again")
		return
	default:
		log.Warn("callback not applied: needs attention", "verdict", verdict, "state", p.State,
			"callback_amount", cb.Amount.String(), "ledger_amount", p.Amount.String(),
			"invoice_status", cb.InvoiceStatus, "invoice_status_id", cb.InvoiceStatusID)
	}
	answer(w, http.StatusOK, verdict)
}

// awaitedWithin bounds how long a payout awaits its invoice number: one that has waited longer
// (its answer lost, and no lookup since) is left to reconcile, and another payout's callback to
// the same account and amount is not asked for again meanwhile.
const awaitedWithin = 24 * time.Hour

// awaited reports whether a payout that may exist at the service but whose invoice number the
// ledger does not hold yet (SUBMITTING: the run has yet to record the service's answer; UNKNOWN:
// the answer was lost), changed within awaitedWithin, pays the callback's account, leading zeros
// aside, and amount. A callback for an invoice the ledger does not know is then most likely that
// payout's: answered 200, it would never come again, and the bank's name for the account, which
// only a callback carries, would be lost with it.
func (h *Handler) awaited(ctx context.Context, cb api.CallbackPayload) (bool, error) {
	account := strings.TrimSpace(cb.OrgnThirdPartyAccountNo)
	if ledger.AccountDigits(account) == "" {
		return false, nil
	}
	since := h.cfg.Now().Add(-awaitedWithin)
	pending := ledger.Filter{States: []ledger.State{ledger.Submitting, ledger.Unknown}, Account: account, Amount: cb.Amount}
	found := false
	err := h.cfg.Ledger.WalkPayouts(ctx, pending, 1, func(p ledger.Payout) error {
		if p.InvoiceNo == "" && !p.UpdatedAt.Before(since) {
			found = true
			return errAwaitedFound
		}
		return nil
	})
	if err != nil && !errors.Is(err, errAwaitedFound) {
		return false, err
	}
	return found, nil
}

// errAwaitedFound ends awaited's walk at the first payout that awaits the callback.
var errAwaitedFound = errors.New("a payout awaits the callback")

// matches reports whether a callback of this verdict is about its payout as the ledger holds it
// (applied, or a replay of one that was). Only then is its display_name the name the bank holds
// for the payout's account: a flagged callback changes nothing of the payout.
func matches(verdict string) bool {
	return verdict == VerdictApplied || verdict == VerdictReplay
}

// refusal maps a VerifyCallback error to an HTTP status and a short reason.
func refusal(err error) (int, string) {
	switch {
	case errors.Is(err, api.ErrCallbackSignature):
		return http.StatusUnauthorized, "invalid signature"
	case errors.Is(err, api.ErrCallbackAlgorithm):
		return http.StatusUnauthorized, "signing algorithm refused"
	case errors.Is(err, api.ErrCallbackExpired):
		return http.StatusUnauthorized, "token expired"
	case errors.Is(err, api.ErrCallbackMalformed):
		return http.StatusBadRequest, "malformed callback"
	}
	return http.StatusInternalServerError, "cannot verify callback"
}

// unsettled answers a callback on which nothing was decided: a non-2xx answer asks the service to
// send it again, and it applies once the ledger answers, or is put right.
func unsettled(w http.ResponseWriter, log *slog.Logger, err error) {
	if errors.Is(err, ErrInvoiceTwice) {
		log.Error("callback not applied", "err", err)
		answer(w, http.StatusServiceUnavailable, "invoice on two payouts: not applied")
		return
	}
	log.Error("callback: ledger", "err", err)
	answer(w, http.StatusServiceUnavailable, "ledger unavailable, try again")
}

// byInvoice is the payout the service created under invoiceNo; found is false when the ledger
// holds none. An empty number names no payout (an empty Filter would select every one). A number
// the ledger holds on two payouts is refused: the service gives each payout its own, so one of
// them was written by hand, and applying the callback to either could pay or fail the wrong one.
func (h *Handler) byInvoice(ctx context.Context, invoiceNo string) (p ledger.Payout, found bool, err error) {
	if invoiceNo == "" {
		return ledger.Payout{}, false, nil
	}
	var ps []ledger.Payout // a page of two holds the payout, or the two that refuse the number
	err = h.cfg.Ledger.WalkPayouts(ctx, ledger.Filter{InvoiceNo: invoiceNo}, 2, func(payout ledger.Payout) error {
		ps = append(ps, payout)
		if len(ps) > 1 {
			return errSecondPayout
		}
		return nil
	})
	switch {
	case err != nil && !errors.Is(err, errSecondPayout):
		return ledger.Payout{}, false, err
	case len(ps) == 0:
		return ledger.Payout{}, false, nil
	case len(ps) > 1:
		return ledger.Payout{}, false, fmt.Errorf("%w: invoice %s is on payouts %s and %s: nothing is applied until the ledger is checked (payout audit verify)",
			ErrInvoiceTwice, invoiceNo, ps[0].Ref, ps[1].Ref)
	}
	return ps[0], true, nil
}

// ErrInvoiceTwice refuses a callback whose invoice number the ledger holds on more than one payout.
var ErrInvoiceTwice = errors.New("one invoice number on two payouts")

// errSecondPayout ends byInvoice's walk at the second payout of an invoice: two are enough to
// refuse it.
var errSecondPayout = errors.New("a second payout of the invoice")

// settle applies what package outcome decides a verified callback does to the ledger. When the payout
// changes state under it (a run or a second delivery of the same callback), it reads the payout
// again and decides once more. Its bool reports that an event of the payout now holds the
// callback's payload: every change decide makes carries it, or follows one that does; for a
// verdict that matches, the last change carries the bank's name too (noteName).
func (h *Handler) settle(ctx context.Context, cb api.Callback) (string, ledger.Payout, bool, error) {
	for attempt := 0; ; attempt++ {
		p, found, err := h.byInvoice(ctx, cb.Payload.InvoiceNo)
		if err != nil {
			return "", ledger.Payout{}, false, fmt.Errorf("find invoice: %w", err)
		}
		if !found {
			return VerdictUnknownInvoice, ledger.Payout{}, false, nil
		}
		verdict, changes := outcome.AfterCallback(cb, p)
		if matches(verdict) {
			noteName(changes, p, cb.Payload.DisplayName)
		}
		if len(changes) == 0 {
			return verdict, p, false, nil
		}
		err = h.cfg.Ledger.Apply(ctx, changes...)
		if err == nil {
			return verdict, p, true, nil
		}
		if !errors.Is(err, ledger.ErrStateConflict) || attempt > 0 {
			return "", p, false, fmt.Errorf("apply callback to %s: %w", p.Ref, err)
		}
	}
}
