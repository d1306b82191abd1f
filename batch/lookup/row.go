package lookup

import (
	"context"
	"fmt"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/ledger"
)

// Steps are what a caller of Row does with a lookup's answer: Found, with the service's payout;
// Missing, when the service says it holds none; GaveUp, when set, after the row's lookups got no
// usable answer within their bound and its note is recorded.
type Steps struct {
	Found   func(p ledger.Payout, got api.Payout) Result
	Missing func(p ledger.Payout, now time.Time) Result
	GaveUp  func(limited bool, msg string)
}

// Row is the one "look up, retry, give up" of the run and reconcile: it reads the row as the
// ledger holds it, looks it up by external_invoice_ref, and hands an answer to steps. A refused
// auth token stops the pool; a 429 is tried again after the service's wait, and no usable answer
// after a backoff, each within its bound; past it the row is given up with a note
// (outcome.LookupGivenUp, reconcile's or the run's), its state kept.
func (s *Session) Row(ctx context.Context, t Task, reconcile bool, steps Steps) Result {
	cfg := s.cfg
	p, err := cfg.Ledger.Get(ctx, t.Ref)
	if err != nil {
		return Result{Task: t, Fatal: err}
	}
	got, err := Get(ctx, cfg.Service, t.Ref)
	now := cfg.Now()
	switch outcome.VerdictOf(err) {
	case outcome.Found:
		s.proven.Store(true)
		return steps.Found(p, got)
	case outcome.NotFound:
		return steps.Missing(p, now)
	case outcome.AuthRefused:
		return Result{Task: t, Fatal: outcome.ErrUnauthorized}
	}
	// api errors never carry the token: the message is recorded as an auditor reads it.
	msg := err.Error()
	limited := api.KindOf(err) == api.KindRateLimited
	o := Result{Task: t, Throttled: limited, Failure: !limited}
	if limited {
		wait, retry := cfg.Backoff.RateLimited(err, t, now)
		o.Pause = now.Add(wait)
		if retry != nil {
			o.Next = retry
			return o
		}
	} else if t.Attempt+1 < cfg.MaxErrors {
		o.Next = &Task{Ref: t.Ref, Kind: LookUp, At: now.Add(cfg.Backoff.Step(t.Attempt)), Attempt: t.Attempt + 1, Refused: t.Refused}
		return o
	}
	tries := t.Attempt + 1
	if limited {
		tries = t.Limited + 1
	}
	if fail := s.Apply(ctx, t, outcome.LookupGivenUp(p, reconcile, limited, tries, msg)); fail != nil {
		return *fail
	}
	if steps.GaveUp != nil {
		steps.GaveUp(limited, msg)
	}
	o.RowDone = true
	return o
}

// Get is Get Payout by external_invoice_ref. The service reads a reference as an invoice number
// too, so an answer about another payout (another external_invoice_ref, or none with ref as its
// invoice number) says nothing about this one: it is no answer, and is looked up again.
func Get(ctx context.Context, svc Service, ref string) (api.Payout, error) {
	got, err := svc.GetPayout(ctx, ref)
	if err != nil {
		return got, err
	}
	other := got.ExternalInvoiceRef != "" && got.ExternalInvoiceRef != ref
	if other || (got.ExternalInvoiceRef == "" && got.PayoutInvoiceNo == ref) {
		return api.Payout{}, &api.Error{Op: "get payout", Kind: api.KindRetryable,
			Err: fmt.Errorf("%w: asked for external_invoice_ref %q, the answer is about invoice %q with external_invoice_ref %q",
				api.ErrBadResponse, ref, got.PayoutInvoiceNo, got.ExternalInvoiceRef)}
	}
	return got, nil
}
