package outcome_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/words"
	"github.com/payout/payout/ledger"
)

func TestVerdictOf(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want outcome.Verdict
	}{
		{nil, outcome.Found},
		{&api.Error{Kind: api.KindNotFound}, outcome.NotFound},
		{&api.Error{Kind: api.KindRateLimited}, outcome.Limited},
		{&api.Error{Kind: api.KindUnauthorized}, outcome.AuthRefused},
		{&api.Error{Kind: api.KindRetryable}, outcome.NoAnswer},
		{&api.Error{Kind: api.KindRejected}, outcome.NoAnswer},
		{errors.New("connection reset"), outcome.NoAnswer},
	} {
		if got := outcome.VerdictOf(tc.err); got != tc.want {
			t.Errorf("VerdictOf(%v) = %d, want %d", tc.err, got, tc.want)
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
		{"amount", row, api.Payout{Value: decimal.RequireFromString("105.00")}, []string{words.MismatchAmount}, "service amount 105.00, ledger 10.50"},
		{"account, masked", row, api.Payout{PayoutAccountNumber: "9999994321"}, []string{words.MismatchAccount}, "service account ****4321, ledger ****6789"},
		{"account masked by the service", row, api.Payout{PayoutAccountNumber: "******6789"}, nil, ""},
		{"account masked in the middle", row, api.Payout{PayoutAccountNumber: "0123xxxx89"}, nil, ""},
		{"account masked, other digits", row, api.Payout{PayoutAccountNumber: "XXXXXX4321"}, []string{words.MismatchAccount}, "service account ****4321"},
		{"account all masked", row, api.Payout{PayoutAccountNumber: "****"}, nil, ""},
		{"invoice", row, api.Payout{PayoutInvoiceNo: "INV-2"}, []string{outcome.MismatchInvoice}, "service invoice INV-2, ledger INV-1"},
		{"no invoice in the ledger yet", ledger.Payout{Account: row.Account, Amount: row.Amount}, api.Payout{PayoutInvoiceNo: "INV-2"}, nil, ""},
		{"all three", row, api.Payout{Value: decimal.RequireFromString("1"), PayoutAccountNumber: "1", PayoutInvoiceNo: "X"},
			[]string{words.MismatchAmount, words.MismatchAccount, outcome.MismatchInvoice}, "MISMATCH: service amount 1.00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diffs := outcome.Differences(tc.row, tc.got)
			var kinds []string
			for _, d := range diffs {
				kinds = append(kinds, d.Kind)
			}
			if strings.Join(kinds, ",") != strings.Join(tc.kinds, ",") {
				t.Errorf("kinds %v, want %v", kinds, tc.kinds)
			}
			text := outcome.DifferenceText(diffs)
			if (tc.text == "") != (text == "") || !strings.Contains(text, tc.text) {
				t.Errorf("text %q, want %q in it", text, tc.text)
			}
			if strings.Contains(text, "0123456789") {
				t.Errorf("text shows a whole account: %q", text)
			}
		})
	}
}

// TestAfterNotFound is the grace of an UNKNOWN row that lookups do not find: looked up again,
// spaced, until it has been reported not found enough times over the whole grace; then never
// created, unless --no-resend-unknown keeps it, or it is stuck at outcome.MaxSendAttempts, which no
// grace changes.
func TestAfterNotFound(t *testing.T) {
	first := time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)
	g := outcome.Grace{Grace: 2 * time.Minute, Lookups: 3}
	unknown := ledger.Payout{Ref: "R1", State: ledger.Unknown, Attempts: 1}
	stuck := ledger.Payout{Ref: "R1", State: ledger.Unknown, Attempts: outcome.MaxSendAttempts}
	for _, tc := range []struct {
		name  string
		p     ledger.Payout
		count int
		now   time.Time
		g     outcome.Grace
		want  outcome.NotFoundVerdict
		at    time.Time
	}{
		{"first not found", unknown, 1, first, g, outcome.LookAgain, first.Add(time.Minute)},
		{"second, spaced", unknown, 2, first.Add(time.Minute), g, outcome.LookAgain, first.Add(2 * time.Minute)},
		{"enough lookups, grace not over", unknown, 3, first.Add(90 * time.Second), g, outcome.LookAgain, first.Add(2 * time.Minute)},
		{"grace over, too few lookups", unknown, 2, first.Add(3 * time.Minute), g, outcome.LookAgain, first.Add(4 * time.Minute)},
		{"enough lookups over the grace", unknown, 3, first.Add(2 * time.Minute), g, outcome.ProvenNeverCreated, time.Time{}},
		{"--no-resend-unknown", unknown, 3, first.Add(2 * time.Minute), outcome.Grace{Grace: g.Grace, Lookups: 3, NoResend: true}, outcome.KeptUnknown, time.Time{}},
		{"stuck: no grace to wait", stuck, 1, first, g, outcome.StuckForGood, time.Time{}},
		{"stuck with --no-resend-unknown waits like any", stuck, 1, first, outcome.Grace{Grace: g.Grace, Lookups: 3, NoResend: true}, outcome.LookAgain, first.Add(time.Minute)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, at := outcome.AfterNotFound(tc.p, tc.count, first, tc.now, tc.g)
			if got != tc.want || !at.Equal(tc.at) {
				t.Errorf("afterNotFound = %d at %s, want %d at %s", got, at, tc.want, tc.at)
			}
		})
	}
}

// TestAfterFound is a lookup that found the payout, for the rows the run and reconcile both look
// up: the ledger follows the service, keeps an invoice number it holds, and records nothing when
// it already says what the service does.
func TestAfterFound(t *testing.T) {
	amount := decimal.RequireFromString("10.00")
	pending := api.Payout{PayoutInvoiceNo: "INV-1", TransactionStatus: api.StatusPending, Value: amount}
	success := api.Payout{PayoutInvoiceNo: "INV-1", TransactionStatus: api.StatusSuccess, Value: amount}
	submitted := ledger.Payout{Ref: "R1", State: ledger.Submitted, Amount: amount, InvoiceNo: "INV-1", TransactionStatus: api.StatusPending}
	for _, tc := range []struct {
		name    string
		p       ledger.Payout
		got     api.Payout
		to      []ledger.State
		invoice string
		detail  string
	}{
		{"unknown, pending at the service", ledger.Payout{Ref: "R1", State: ledger.Unknown, Amount: amount}, pending,
			[]ledger.State{ledger.Submitted}, "INV-1", "found: invoice INV-1, status PENDING"},
		{"unknown, already paid", ledger.Payout{Ref: "R1", State: ledger.Unknown, Amount: amount}, success,
			[]ledger.State{ledger.Submitted, ledger.Succeeded}, "INV-1", ""},
		{"submitted without an invoice number", ledger.Payout{Ref: "R1", State: ledger.Submitted, Amount: amount}, pending,
			[]ledger.State{ledger.Submitted}, "INV-1", "not final yet"},
		{"submitted, nothing new", submitted, pending, nil, "", ""},
		{"submitted, now final", submitted, success, []ledger.State{ledger.Submitted, ledger.Succeeded}, "INV-1", ""},
		{"submitted, the service's invoice differs: the ledger's is kept", submitted,
			api.Payout{PayoutInvoiceNo: "INV-9", TransactionStatus: api.StatusPending, Value: amount},
			[]ledger.State{ledger.Submitted}, "INV-1", "MISMATCH: service invoice INV-9, ledger INV-1"},
		{"refused, but the service holds it", ledger.Payout{Ref: "R1", State: ledger.Failed, Amount: amount}, pending,
			[]ledger.State{ledger.Submitted}, "INV-1", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changes := outcome.AfterFound(tc.p, tc.got, "found", outcome.Differences(tc.p, tc.got))
			if len(changes) != len(tc.to) {
				t.Fatalf("changes %+v, want to %v", changes, tc.to)
			}
			for i, c := range changes {
				if c.To != tc.to[i] {
					t.Errorf("change %d to %s, want %s", i, c.To, tc.to[i])
				}
			}
			if len(changes) == 0 {
				return
			}
			if changes[0].From != tc.p.State || changes[0].InvoiceNo != tc.invoice || !strings.Contains(changes[0].Detail, tc.detail) {
				t.Errorf("first change %+v, want from %s, invoice %s, %q in its detail", changes[0], tc.p.State, tc.invoice, tc.detail)
			}
		})
	}
}
