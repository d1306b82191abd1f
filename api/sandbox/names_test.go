package sandbox_test

import (
	"testing"

	"github.com/payout/payout/api/sandbox"
)

// The callback's display_name is the name the sandbox's bank holds: the recipient in capitals,
// unless DisplayNames sets it for the payout's reference or, failing that, its account.
func TestCallbackDisplayName(t *testing.T) {
	t.Parallel()
	sb := sandbox.New(sandbox.Options{SettleInterval: -1, DisplayNames: map[string]string{
		"REF-2": "LIM WEI JIE", "5550001111": "WONG KAH HOE", "REF-4": "CHAN PUI YEE"}})
	t.Cleanup(sb.Close)
	cases := []struct {
		rec  sandbox.Record
		want string
	}{
		{sandbox.Record{ExternalInvoiceRef: "REF-1", Account: "1234567890", RecipientReference: "Tan Mei Ling"}, "TAN MEI LING"},
		{sandbox.Record{ExternalInvoiceRef: "REF-2", Account: "1234567890", RecipientReference: "Tan Mei Ling"}, "LIM WEI JIE"},
		{sandbox.Record{ExternalInvoiceRef: "REF-3", Account: "5550001111", RecipientReference: "Tan Mei Ling"}, "WONG KAH HOE"},
		{sandbox.Record{ExternalInvoiceRef: "REF-4", Account: "5550001111", RecipientReference: "Tan Mei Ling"}, "CHAN PUI YEE"},
	}
	for _, c := range cases {
		if got := sb.CallbackPayload(c.rec).DisplayName; got != c.want {
			t.Errorf("%s: display_name %q, want %q", c.rec.ExternalInvoiceRef, got, c.want)
		}
	}
}
