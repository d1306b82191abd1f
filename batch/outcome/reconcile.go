package outcome

import (
	"fmt"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/words"
	"github.com/payout/payout/ledger"
)

// View is what reconcile makes of one payout's lookup for its report: what it flags, and a note.
type View struct {
	Mismatches []string
	Note       string
}

// ReconcileFound decides what a lookup by reconcile that found the service's payout got does to
// p. A final state of the ledger is never overwritten: a service that now says otherwise is
// flagged and the event keeps what it said.
func ReconcileFound(p ledger.Payout, got api.Payout) ([]ledger.Change, View) {
	var view View
	diffs := Differences(p, got)
	for _, d := range diffs {
		view.Mismatches = append(view.Mismatches, d.Kind)
	}
	invoice := p.InvoiceNo
	if invoice == "" {
		invoice = got.PayoutInvoiceNo
	}
	const how = "reconcile: found by external_invoice_ref"
	status := got.TransactionStatus
	switch p.State {
	case ledger.Unknown:
		view.Note = "the outcome was unknown; the service has it"
		return AfterFound(p, got, how, diffs), view
	case ledger.Submitted:
		if !got.Final() {
			view.Note = "not final at the service yet"
		}
		return AfterFound(p, got, how, diffs), view
	case ledger.Failed, ledger.Succeeded:
	default:
		return nil, view
	}
	if RefusedCreate(p) {
		// The service refused the create and made the payout all the same.
		view.Note = "refused when it was sent, but the service holds it: never pay it again under a new reference"
		return AfterFound(p, got, how+": refused when it was sent, but the service holds it", diffs), view
	}
	found := how
	if text := DifferenceText(diffs); text != "" {
		found += " (" + text + ")"
	}
	if want := finalStatus(p.State); status != want {
		view.Mismatches = append(view.Mismatches, words.MismatchFinalChanged)
		view.Note = fmt.Sprintf("the service now reports %s; the ledger keeps %s: investigate", OrNone(status), p.State)
		return []ledger.Change{{From: p.State, To: p.State,
			Detail: fmt.Sprintf("%s: the service now reports status %s for a payout the ledger holds as %s; the ledger's final state is kept: investigate",
				found, OrNone(status), p.State)}}, view
	}
	if invoice != p.InvoiceNo || len(diffs) > 0 {
		return []ledger.Change{{From: p.State, To: p.State, InvoiceNo: invoice,
			Detail: fmt.Sprintf("%s: invoice %s, status %s, as the ledger has it", found, OrNone(invoice), OrNone(status))}}, view
	}
	return nil, view
}

func finalStatus(s ledger.State) string {
	if s == ledger.Succeeded {
		return api.StatusSuccess
	}
	return api.StatusFailed
}

// ReconcileMissing decides what a lookup by reconcile that did not find p does, for a payout
// that is not UNKNOWN (an UNKNOWN one takes the run's way, AfterNotFound). A refused create is
// confirmed, once, when trusted says "not found" may confirm a refusal (it is asked only then).
// For a payout the service accepted, "not found" is a mismatch, and a sign that "not found"
// cannot be trusted to resend anything: broken says so.
func ReconcileMissing(p ledger.Payout, trusted func() bool) (changes []ledger.Change, view View, broken bool) {
	if RefusedCreate(p) {
		// Refused when it was sent: the service created nothing, and says so.
		if !FailureConfirmed(p) && trusted() {
			changes = []ledger.Change{{From: p.State, To: p.State, Error: confirmedError(p.LastError), ConfirmRefusal: true,
				Detail: "reconcile: refused when it was sent, and not found by external_invoice_ref: nothing was created"}}
		}
		return changes, View{Note: "not at the service: it refused the payout when it was sent"}, false
	}
	return []ledger.Change{{From: p.State, To: p.State,
			Detail: fmt.Sprintf("reconcile: not found by external_invoice_ref although the service accepted it (invoice %s); the ledger keeps %s: investigate",
				OrNone(p.InvoiceNo), p.State)}},
		View{Mismatches: []string{words.MismatchUnknown}, Note: "the service does not know this payout, which it accepted: investigate"}, true
}
