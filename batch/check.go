package batch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/ledger"
)

// Mismatch texts of a reconciliation report beyond those package report defines.
const (
	mismatchInvoice = "invoice number differs"
	// MismatchNotChecked flags a payout that could not be looked up.
	MismatchNotChecked = "not checked"
)

// Lookup asks Checker.Check to look one payout up, not before At: payouts the service accepted go
// first, so that "not found" is trusted only once lookups are shown to work.
type Lookup struct {
	Ref string
	At  time.Time
}

// ServiceView is what the service said of one payout that Checker.Check looked up, and what was
// made of it.
type ServiceView struct {
	Found      bool
	Payout     api.Payout // what the service holds, when Found
	NotFound   bool
	Failed     string // the last error when the service never answered
	Mismatches []string
	Note       string
}

// Checked is what Checker.Check found.
type Checked struct {
	Views map[string]ServiceView // by reference; a payout not looked up has none
	// Throttled counts the payouts left not checked because every lookup of them was a 429.
	Throttled int
	// Stopped, when not nil, is why the lookups stopped before every payout was looked up. It
	// wraps ErrThrottled when the service answered nothing but 429.
	Stopped error
}

// RefusedCreate reports a FAILED payout whose create the service refused: it never gave an
// invoice number.
func RefusedCreate(p ledger.Payout) bool {
	return p.State == ledger.Failed && p.InvoiceNo == ""
}

// reconciliation is the state of one Checker, shared by its workers.
type reconciliation struct {
	*lookups
	viewsMu sync.Mutex
	views   map[string]ServiceView
	// throttledRows counts the payouts left not checked because every lookup of them was a 429.
	throttledRows atomic.Int64
}

func (rc *reconciliation) record(ref string, v ServiceView) {
	rc.viewsMu.Lock()
	rc.views[ref] = v
	rc.viewsMu.Unlock()
}

// check is the reconciliation's lookup task: the submission's lookup, but able to compare final
// rows and to flag what differs. It never sends. A row that moved under it (a callback applied by
// `payout callbacks`, which does not take the run lock) is read and looked up again, a bounded
// number of times, rather than stopping the reconciliation.
func (rc *reconciliation) check(ctx context.Context, t task) outcome {
	o := rc.checkOnce(ctx, t)
	if o.fatal != nil && errors.Is(o.fatal, ledger.ErrStateConflict) && t.attempt+1 < rc.r.cfg.MaxLookupErrors {
		rc.log.Info("payout changed during its lookup; looking it up again", "ref", t.ref)
		return outcome{task: t, serviceOK: true, next: &task{ref: t.ref, kind: taskLookup, at: rc.r.cfg.Now(), attempt: t.attempt + 1}}
	}
	return rc.settledByCallback(o)
}

func (rc *reconciliation) checkOnce(ctx context.Context, t task) outcome {
	cfg := rc.r.cfg
	if t.kind != taskLookup {
		rc.log.Error("reconcile refused to send a payout", "ref", t.ref)
		return outcome{task: t, rowDone: true}
	}
	p, err := cfg.Ledger.Get(ctx, t.ref)
	if err != nil {
		return outcome{task: t, fatal: err}
	}
	got, err := lookUp(ctx, cfg.Service, t.ref)
	now := cfg.Now()
	switch verdictOf(err) {
	case lookupFound:
		rc.proven.Store(true)
		return rc.found(ctx, t, p, got)
	case lookupNotFound:
		return rc.missing(ctx, t, p, now)
	case lookupStop:
		return outcome{task: t, fatal: ErrUnauthorized}
	case lookupThrottled:
		return rc.throttled(ctx, t, p, err, now)
	}
	msg := errorText(err)
	if t.attempt+1 < cfg.MaxLookupErrors {
		return outcome{task: t, failure: true, next: &task{ref: t.ref, kind: taskLookup,
			at: now.Add(backoff(cfg.BackoffBase, cfg.BackoffMax, t.attempt)), attempt: t.attempt + 1}}
	}
	if o := rc.apply(ctx, t, ledger.Change{From: p.State, To: p.State, Error: msg,
		Detail: fmt.Sprintf("reconcile: lookup failed %d times, not checked: %s", t.attempt+1, msg)}); o != nil {
		return *o
	}
	rc.record(t.ref, ServiceView{Failed: msg, Mismatches: []string{MismatchNotChecked}})
	return outcome{task: t, failure: true, rowDone: true}
}

// throttled handles a 429: the lookup is tried again after the wait the service asked for, within
// the run's bound on 429s; past it, the payout is reported not checked.
func (rc *reconciliation) throttled(ctx context.Context, t task, p ledger.Payout, err error, now time.Time) outcome {
	wait, retry := rc.rateLimited(err, t, now)
	if retry != nil {
		return outcome{task: t, throttled: true, pause: now.Add(wait), next: retry}
	}
	msg := errorText(err)
	if o := rc.apply(ctx, t, ledger.Change{From: p.State, To: p.State, Error: msg,
		Detail: fmt.Sprintf("reconcile: lookup rate limited %d times in a row (HTTP 429), not checked: %s", t.limited+1, msg)}); o != nil {
		return *o
	}
	rc.throttledRows.Add(1)
	rc.record(t.ref, ServiceView{Failed: "the service is throttling lookups (HTTP 429)", Mismatches: []string{MismatchNotChecked}})
	return outcome{task: t, throttled: true, pause: now.Add(wait), rowDone: true}
}

// found records what the service holds for a payout. A final state of the ledger is never
// overwritten: a service that now says otherwise is flagged and the event keeps what it said.
func (rc *reconciliation) found(ctx context.Context, t task, p ledger.Payout, got api.Payout) outcome {
	view := ServiceView{Found: true, Payout: got}
	diffs := differences(p, got)
	for _, d := range diffs {
		view.Mismatches = append(view.Mismatches, d.kind)
	}
	invoice := p.InvoiceNo
	if invoice == "" {
		invoice = got.PayoutInvoiceNo
	}
	const how = "reconcile: found by external_invoice_ref"
	status := got.TransactionStatus
	var changes []ledger.Change
	switch p.State {
	case ledger.Unknown:
		changes = afterFound(p, got, how, diffs)
		view.Note = "the outcome was unknown; the service has it"
	case ledger.Submitted:
		changes = afterFound(p, got, how, diffs)
		if !got.Final() {
			view.Note = "not final at the service yet"
		}
	case ledger.Failed:
		if RefusedCreate(p) {
			// The service refused the create and made the payout all the same.
			changes = afterFound(p, got, how+": refused when it was sent, but the service holds it", diffs)
			view.Note = "refused when it was sent, but the service holds it: never pay it again under a new reference"
			break
		}
		fallthrough
	case ledger.Succeeded:
		found := how
		if text := differenceText(diffs); text != "" {
			found += " (" + text + ")"
		}
		if want := finalStatus(p.State); status != want {
			view.Mismatches = append(view.Mismatches, report.MismatchFinalChanged)
			view.Note = fmt.Sprintf("the service now reports %s; the ledger keeps %s: investigate", orNone(status), p.State)
			changes = []ledger.Change{{From: p.State, To: p.State,
				Detail: fmt.Sprintf("%s: the service now reports status %s for a payout the ledger holds as %s; the ledger's final state is kept: investigate",
					found, orNone(status), p.State)}}
		} else if invoice != p.InvoiceNo || len(diffs) > 0 {
			changes = []ledger.Change{{From: p.State, To: p.State, InvoiceNo: invoice,
				Detail: fmt.Sprintf("%s: invoice %s, status %s, as the ledger has it", found, orNone(invoice), orNone(status))}}
		}
	}
	if o := rc.apply(ctx, t, changes...); o != nil {
		return *o
	}
	rc.record(t.ref, view)
	return outcome{task: t, serviceOK: true, rowDone: true}
}

// missing handles "not found". For an UNKNOWN row it is the run's decision (look again after a
// spacing, or declare it never created once the grace has passed and lookups are proven to work).
// For a payout the service accepted, "not found" is a mismatch, and a sign that "not found" cannot
// be trusted to resend anything.
func (rc *reconciliation) missing(ctx context.Context, t task, p ledger.Payout, now time.Time) outcome {
	switch {
	case p.State == ledger.Unknown:
		rc.record(t.ref, ServiceView{NotFound: true})
		return rc.notFound(ctx, t, p, now, false)
	case RefusedCreate(p):
		// Refused when it was sent: the service created nothing, and says so.
		if !FailureConfirmed(p) && rc.refusalNotFoundTrusted(ctx) {
			if o := rc.apply(ctx, t, ledger.Change{From: p.State, To: p.State, Error: confirmedError(p.LastError), ConfirmRefusal: true,
				Detail: "reconcile: refused when it was sent, and not found by external_invoice_ref: nothing was created"}); o != nil {
				return *o
			}
		}
		rc.record(t.ref, ServiceView{NotFound: true, Note: "not at the service: it refused the payout when it was sent"})
		return outcome{task: t, serviceOK: true, rowDone: true}
	}
	rc.broken.Store(true)
	if o := rc.apply(ctx, t, ledger.Change{From: p.State, To: p.State,
		Detail: fmt.Sprintf("reconcile: not found by external_invoice_ref although the service accepted it (invoice %s); the ledger keeps %s: investigate",
			orNone(p.InvoiceNo), p.State)}); o != nil {
		return *o
	}
	rc.record(t.ref, ServiceView{NotFound: true, Mismatches: []string{report.MismatchUnknown},
		Note: "the service does not know this payout, which it accepted: investigate"})
	return outcome{task: t, serviceOK: true, rowDone: true}
}

func finalStatus(s ledger.State) string {
	if s == ledger.Succeeded {
		return api.StatusSuccess
	}
	return api.StatusFailed
}
