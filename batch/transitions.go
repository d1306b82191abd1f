package batch

import (
	"fmt"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/ledger"
)

// This file holds the decisions of a row's state machine that the run and reconcile share, as
// pure functions of what the ledger holds and what the service said: no ledger, no requests.

// lookupVerdict is what a lookup by external_invoice_ref says, for the row's next move.
type lookupVerdict int

const (
	lookupFound     lookupVerdict = iota // the service holds the payout
	lookupNotFound                       // the service says, unambiguously, that it holds none
	lookupThrottled                      // 429: look again after the wait the service asks for
	lookupStop                           // the auth token was refused: nothing more can be looked up
	lookupRetry                          // no usable answer: look again after a backoff, within a bound
)

// verdictOf classifies the error of a Get Payout (nil: found).
func verdictOf(err error) lookupVerdict {
	if err == nil {
		return lookupFound
	}
	switch api.KindOf(err) {
	case api.KindNotFound:
		return lookupNotFound
	case api.KindRateLimited:
		return lookupThrottled
	case api.KindUnauthorized:
		return lookupStop
	}
	return lookupRetry
}

// difference is one way the service's payout differs from the ledger's row: kind is the
// reconciliation report's mismatch, text says it for an event (accounts masked).
type difference struct {
	kind string
	text string
}

// differences compares what the service holds with the ledger's row. A field the service leaves
// empty is not compared.
func differences(p ledger.Payout, got api.Payout) []difference {
	var diffs []difference
	if !got.Value.IsZero() && !got.Value.Equal(p.Amount) {
		diffs = append(diffs, difference{report.MismatchAmount,
			fmt.Sprintf("service amount %s, ledger %s", got.Value.StringFixed(2), p.Amount.StringFixed(2))})
	}
	if got.PayoutAccountNumber != "" && got.PayoutAccountNumber != p.Account {
		diffs = append(diffs, difference{report.MismatchAccount,
			fmt.Sprintf("service account %s, ledger %s", MaskAccount(got.PayoutAccountNumber), MaskAccount(p.Account))})
	}
	if p.InvoiceNo != "" && got.PayoutInvoiceNo != "" && got.PayoutInvoiceNo != p.InvoiceNo {
		diffs = append(diffs, difference{mismatchInvoice,
			fmt.Sprintf("service invoice %s, ledger %s", got.PayoutInvoiceNo, p.InvoiceNo)})
	}
	return diffs
}

// differenceText is the differences as one text for an event, empty when there are none.
func differenceText(diffs []difference) string {
	if len(diffs) == 0 {
		return ""
	}
	text := "MISMATCH: "
	for i, d := range diffs {
		if i > 0 {
			text += "; "
		}
		text += d.text
	}
	return text
}
