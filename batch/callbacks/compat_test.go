package callbacks_test

import (
	"net/http"
	"testing"

	"github.com/payout/payout/batch/callbacks"
	"github.com/payout/payout/ledger"
)

// TestCallbackSuccessInAnyCase: invoice_status is matched in any case, as transaction_status is,
// so a service that writes "success" with invoice_status_id 2 settles the payout.
func TestCallbackSuccessInAnyCase(t *testing.T) {
	t.Parallel()
	r := newCBRig(t)
	r.payout("INV-1", "POI1001", "1500.50", ledger.Submitting, ledger.Submitted)
	p := cbPayload("POI1001", "1500.50", "BR1001")
	p.InvoiceStatus = "success"
	status, answer := r.post(cbSign(t, p, cbHashKey))
	if status != http.StatusOK || answer["message"] != callbacks.VerdictApplied {
		t.Fatalf("answer %d %v, want 200 %s", status, answer, callbacks.VerdictApplied)
	}
	if got := r.get("INV-1"); got.State != ledger.Succeeded {
		t.Fatalf("state %s, want SUCCEEDED", got.State)
	}
}
