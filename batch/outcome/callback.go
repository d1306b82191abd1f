package outcome

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/payout/payout/api"
	"github.com/payout/payout/ledger"
)

// Verdicts a verified callback is stored with (ledger.StoredCallback.Verdict).
const (
	CallbackApplied         = "applied"          // the payout moved to SUCCEEDED
	CallbackReplay          = "replay"           // already SUCCEEDED: nothing changed
	CallbackAmountMismatch  = "amount-mismatch"  // amount differs from the ledger's: flagged, not applied
	CallbackNotSuccess      = "not-success"      // the payload does not say SUCCESS (id 2): not applied
	CallbackConflict        = "conflict"         // the ledger says FAILED: flagged, not applied
	CallbackReplayMismatch  = "replay-mismatch"  // already SUCCEEDED with another bank reference: flagged
	CallbackUnexpectedState = "unexpected-state" // READY, SUBMITTING or REJECTED: flagged, not applied
)

// callbackSuccessStatusID is the invoice_status_id the service pairs with invoice_status SUCCESS.
const callbackSuccessStatusID = 2

// AfterCallback returns the verdict on a verified callback for payout p and the ledger changes
// it makes. It changes nothing it cannot prove: anything but a SUCCESS of the ledger's amount for
// a payout the service accepted is flagged with an event and left to reconcile and people.
func AfterCallback(cb api.Callback, p ledger.Payout) (string, []ledger.Change) {
	pl := cb.Payload
	raw := string(cb.RawPayload)
	note := func(verdict, detail string) (string, []ledger.Change) {
		if !ledger.Allowed(p.State, p.State) {
			// No event can be added to a row in this state (SUBMITTING, REJECTED): the stored
			// callback, with its verdict, is the record.
			return verdict, nil
		}
		return verdict, []ledger.Change{{Ref: p.Ref, From: p.State, To: p.State, Detail: "callback: " + detail, Payload: raw}}
	}
	if !strings.EqualFold(strings.TrimSpace(pl.InvoiceStatus), api.StatusSuccess) || pl.InvoiceStatusID != callbackSuccessStatusID || bankSaysNo(cb.RawPayload) {
		return note(CallbackNotSuccess, fmt.Sprintf("invoice_status %q (id %d, bank_response_success %t) is not SUCCESS (id 2): not applied",
			pl.InvoiceStatus, pl.InvoiceStatusID, pl.BankResponseSuccess))
	}
	if !pl.Amount.Equal(p.Amount) {
		return note(CallbackAmountMismatch, fmt.Sprintf("SUCCESS for amount %s differs from ledger %s: not applied",
			pl.Amount.String(), p.Amount.StringFixed(2)))
	}
	success := ledger.Change{Ref: p.Ref, From: ledger.Submitted, To: ledger.Succeeded, TransactionStatus: api.StatusSuccess,
		BankReferenceNo: pl.BankReferenceNo, Detail: "callback: SUCCESS, bank reference " + OrNone(pl.BankReferenceNo), Payload: raw}
	switch p.State {
	case ledger.Submitted:
		return CallbackApplied, []ledger.Change{success}
	case ledger.Unknown:
		// A signed callback naming the invoice proves the service created the payout: the row
		// takes the documented way through SUBMITTED, in one transaction.
		found := ledger.Change{Ref: p.Ref, From: ledger.Unknown, To: ledger.Submitted, ResetNotFound: true,
			Detail: "callback: the service has the payout (invoice " + pl.InvoiceNo + ")"}
		return CallbackApplied, []ledger.Change{found, success}
	case ledger.Succeeded:
		if p.BankReferenceNo != "" && pl.BankReferenceNo != "" && p.BankReferenceNo != pl.BankReferenceNo {
			return note(CallbackReplayMismatch, fmt.Sprintf("replayed SUCCESS with bank reference %s, ledger has %s: not applied",
				pl.BankReferenceNo, p.BankReferenceNo))
		}
		// A replay adds nothing to the payout's history; the stored callback records it.
		return CallbackReplay, nil
	case ledger.Failed:
		return note(CallbackConflict, "SUCCESS for a payout the ledger has as FAILED: not applied, check with the service")
	}
	return note(CallbackUnexpectedState, fmt.Sprintf("SUCCESS for a payout in state %s: not applied, reconcile will settle it", p.State))
}

// bankSaysNo reports whether the payload carries bank_response_success explicitly false (absent
// is not a no: the field's presence is not documented as certain).
func bankSaysNo(raw json.RawMessage) bool {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return false
	}
	v, ok := fields["bank_response_success"]
	if !ok {
		return false
	}
	switch string(bytes.TrimSpace(v)) {
	case "false", `"false"`, "0", `"0"`:
		return true
	}
	return false
}
