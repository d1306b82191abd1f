package batch

import (
	"errors"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/ledger"
)

func TestVerdictOf(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want lookupVerdict
	}{
		{nil, lookupFound},
		{&api.Error{Kind: api.KindNotFound}, lookupNotFound},
		{&api.Error{Kind: api.KindRateLimited}, lookupThrottled},
		{&api.Error{Kind: api.KindUnauthorized}, lookupStop},
		{&api.Error{Kind: api.KindRetryable}, lookupRetry},
		{&api.Error{Kind: api.KindRejected}, lookupRetry},
		{errors.New("connection reset"), lookupRetry},
	} {
		if got := verdictOf(tc.err); got != tc.want {
			t.Errorf("verdictOf(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func TestDifferences(t *testing.T) {
	row := ledger.Payout{Ref: "R1", Account: "0123456789", Amount: decimal.RequireFromString("10.50"), InvoiceNo: "INV-1"}
	for _, tc := range []struct {
		name  string
		row   ledger.Payout
		got   api.Payout
		kinds []string
		text  string // in the event's text
	}{
		{"same", row, api.Payout{Value: decimal.RequireFromString("10.5"), PayoutAccountNumber: "0123456789", PayoutInvoiceNo: "INV-1"}, nil, ""},
		{"service leaves fields empty", row, api.Payout{}, nil, ""},
		{"amount", row, api.Payout{Value: decimal.RequireFromString("105.00")}, []string{report.MismatchAmount}, "service amount 105.00, ledger 10.50"},
		{"account, masked", row, api.Payout{PayoutAccountNumber: "9999994321"}, []string{report.MismatchAccount}, "service account ****4321, ledger ****6789"},
		{"invoice", row, api.Payout{PayoutInvoiceNo: "INV-2"}, []string{mismatchInvoice}, "service invoice INV-2, ledger INV-1"},
		{"no invoice in the ledger yet", ledger.Payout{Account: row.Account, Amount: row.Amount}, api.Payout{PayoutInvoiceNo: "INV-2"}, nil, ""},
		{"all three", row, api.Payout{Value: decimal.RequireFromString("1"), PayoutAccountNumber: "1", PayoutInvoiceNo: "X"},
			[]string{report.MismatchAmount, report.MismatchAccount, mismatchInvoice}, "MISMATCH: service amount 1.00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diffs := differences(tc.row, tc.got)
			var kinds []string
			for _, d := range diffs {
				kinds = append(kinds, d.kind)
			}
			if strings.Join(kinds, ",") != strings.Join(tc.kinds, ",") {
				t.Errorf("kinds %v, want %v", kinds, tc.kinds)
			}
			text := differenceText(diffs)
			if (tc.text == "") != (text == "") || !strings.Contains(text, tc.text) {
				t.Errorf("text %q, want %q in it", text, tc.text)
			}
			if strings.Contains(text, "0123456789") {
				t.Errorf("text shows a whole account: %q", text)
			}
		})
	}
}
