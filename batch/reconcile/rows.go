package reconcile

import (
	"fmt"
	"strings"

	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/ledger"
)

// reportRows turns the entries into report rows with the ledger's state after the lookups.
func reportRows(entries []reconEntry, before, after map[string]ledger.Payout, lookups map[string]bool, checked checked) []report.ReconRow {
	rows := make([]report.ReconRow, 0, len(entries))
	for _, e := range entries {
		row := report.ReconRow{Ref: e.ref, Line: e.line, RunID: e.runID, Recipient: e.recipient, Account: e.account, LedgerAmount: e.amount, LedgerAmountText: e.amountText}
		p, recorded := after[e.ref]
		switch {
		case e.rejected:
			row.LedgerState, row.Message = string(ledger.Rejected), e.reason
		case e.unrecorded || !recorded:
			row.LedgerState = string(ledger.Ready)
			row.Message = "not submitted: the file was rejected; fix the rejected rows and run it again"
		default:
			row.LedgerState, row.LedgerAmount, row.InvoiceNo = string(p.State), p.Amount, p.InvoiceNo
			row.Mismatches, row.Message = describe(&row, p, before[e.ref], lookups[e.ref], checked)
		}
		rows = append(rows, row)
	}
	return rows
}

// describe fills the service's side of a row and says what a reader needs to know about it.
func describe(row *report.ReconRow, p, was ledger.Payout, looked bool, checked checked) ([]string, string) {
	v, ok := checked.views[p.Ref]
	var notes []string
	if was.State != p.State {
		notes = append(notes, fmt.Sprintf("%s → %s", was.State, p.State))
	}
	switch {
	case !looked:
	case !ok && checked.stopped != nil:
		return []string{MismatchNotChecked}, "not looked up: reconcile stopped first; run it again"
	case !ok:
		return []string{MismatchNotChecked}, "not looked up"
	case v.failed != "":
		return v.mismatches, "the service did not answer: " + v.failed
	case v.found:
		row.ServiceStatus = v.payout.TransactionStatus
		if !v.payout.Value.IsZero() {
			amount := v.payout.Value
			row.ServiceAmount = &amount
		}
		row.ServiceAccount = v.payout.PayoutAccountNumber
		if row.InvoiceNo == "" {
			row.InvoiceNo = v.payout.PayoutInvoiceNo
		}
	}
	switch {
	case p.State.OutcomeUnknown():
		if outcome.Stuck(p) {
			notes = append(notes, outcome.StuckMessage(p.Ref, p.Attempts))
		} else if v.notFound {
			notes = append(notes, fmt.Sprintf("not found by %d lookups; outcome still unknown: see `payout status %s`", p.NotFoundCount, p.Ref))
		} else {
			notes = append(notes, outcome.Words(p.State))
		}
	case p.State == ledger.Ready:
		if was.State == ledger.Unknown {
			notes = append(notes, "never created (not found by every lookup while lookups work): the next run of its file sends it")
		} else {
			notes = append(notes, outcome.Words(p.State)+": run its file again")
		}
	case p.State == ledger.Failed:
		if v.note == "" && p.LastError != "" {
			notes = append(notes, p.LastError)
		}
	}
	if v.note != "" {
		notes = append(notes, v.note)
	}
	return v.mismatches, strings.Join(notes, "; ")
}
