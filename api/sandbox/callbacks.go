package sandbox

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/api"
)

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
	return api.CallbackPayload{
		InvoiceNo: rec.InvoiceNo, InvoiceStatusID: 2, InvoiceStatus: api.StatusSuccess,
		Amount: rec.Amount, PaymentSwitchChargeRate: decimal.Zero, PayoutServiceID: rec.ProviderID,
		ResponseCode: 2100, BankResponseSuccess: true, OrgnFromAccountCurrency: "MYR",
		OrgnThirdPartyAccountNo: rec.Account, OrgnPaymentDescription: rec.Description,
		BizMsgID: "BM" + strings.TrimPrefix(rec.InvoiceNo, "POI"), DisplayName: s.displayName(rec),
		BankReferenceNo: rec.BankReferenceNo, OrgnTransactionAmount: rec.Amount.StringFixed(2),
		FromAccountNo: rec.VirtualPool,
	}
}

// displayName is the name the sandbox's bank holds for a payout's account: Options.DisplayNames
// for its external_invoice_ref, else for its account, else its recipient_reference in capitals,
// as banks keep names.
func (s *Server) displayName(rec Record) string {
	if name, ok := s.opts.DisplayNames[rec.ExternalInvoiceRef]; ok {
		return name
	}
	if name, ok := s.opts.DisplayNames[rec.Account]; ok {
		return name
	}
	return strings.ToUpper(rec.RecipientReference)
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
