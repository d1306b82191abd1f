package sandbox

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/payout/payout/api"
)

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
	for _, d := range s.pending.popDue(now) {
		r := d.rec
		r.SettledAt = now
		if s.fails(r.Account) {
			r.Status = api.StatusFailed
			continue
		}
		r.Status = api.StatusSuccess
		r.BankReferenceNo = "BR" + strings.TrimPrefix(r.InvoiceNo, "POI")
		succeeded = append(succeeded, *r)
	}
	return succeeded
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
	s.pending.add(rec, now.Add(s.opts.SettleAfter), s.seq)
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
