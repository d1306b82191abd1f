package batch

import (
	"errors"
	"strings"
	"testing"
	"time"

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
		{"account masked by the service", row, api.Payout{PayoutAccountNumber: "******6789"}, nil, ""},
		{"account masked in the middle", row, api.Payout{PayoutAccountNumber: "0123xxxx89"}, nil, ""},
		{"account masked, other digits", row, api.Payout{PayoutAccountNumber: "XXXXXX4321"}, []string{report.MismatchAccount}, "service account ****4321"},
		{"account all masked", row, api.Payout{PayoutAccountNumber: "****"}, nil, ""},
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

// TestAfterSend is the answer to a POST, for every kind of answer: where the row goes, whether
// the send counts towards MaxSendAttempts, and what follows.
func TestAfterSend(t *testing.T) {
	now := time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)
	b := backoffs{base: time.Millisecond, max: 10 * time.Millisecond}
	send := task{ref: "R1", kind: taskSend, at: now}
	for _, tc := range []struct {
		name     string
		created  api.CreateResult
		err      error
		t        task
		to       []ledger.State
		counted  bool
		next     taskKind
		hasNext  bool
		refused  bool // the follow-up confirms a refusal
		flags    string
		fatal    bool
		rowDone  bool
		pauseFor time.Duration
	}{
		{name: "accepted, pending", created: api.CreateResult{InvoiceNo: "INV-1", TransactionStatus: api.StatusPending},
			t: send, to: []ledger.State{ledger.Submitted}, counted: true, flags: "ok", rowDone: true},
		{name: "accepted, success", created: api.CreateResult{InvoiceNo: "INV-1", TransactionStatus: api.StatusSuccess},
			t: send, to: []ledger.State{ledger.Submitted, ledger.Succeeded}, counted: true, flags: "ok", rowDone: true},
		{name: "accepted without an invoice number", t: send, to: []ledger.State{ledger.Submitted}, counted: true, flags: "ok",
			hasNext: true, next: taskLookup},
		{name: "refused", err: &api.Error{Kind: api.KindRejected}, t: send, to: []ledger.State{ledger.Unknown}, counted: true,
			flags: "ok", hasNext: true, next: taskLookup, refused: true},
		{name: "duplicate", err: &api.Error{Kind: api.KindDuplicate}, t: send, to: []ledger.State{ledger.Unknown}, counted: true,
			flags: "ok", hasNext: true, next: taskLookup},
		{name: "connection refused", err: &api.Error{Kind: api.KindRetryable}, t: send, to: []ledger.State{ledger.Ready},
			flags: "failure", hasNext: true, next: taskSend},
		{name: "429", err: &api.Error{Kind: api.KindRateLimited, RetryAfter: time.Second}, t: send, to: []ledger.State{ledger.Ready},
			flags: "throttled", hasNext: true, next: taskSend, pauseFor: time.Second},
		{name: "429, the last allowed", err: &api.Error{Kind: api.KindRateLimited, RetryAfter: time.Second},
			t: task{ref: "R1", kind: taskSend, limited: maxRateLimited - 1}, to: []ledger.State{ledger.Ready}, flags: "throttled", rowDone: true, pauseFor: time.Second},
		{name: "auth refused", err: &api.Error{Kind: api.KindUnauthorized}, t: send, to: []ledger.State{ledger.Ready}, fatal: true},
		{name: "create endpoint missing", err: &api.Error{Kind: api.KindNotFound}, t: send, to: []ledger.State{ledger.Unknown}, fatal: true},
		{name: "no usable answer", err: &api.Error{Kind: api.KindOutcomeUnknown}, t: send, to: []ledger.State{ledger.Unknown}, counted: true,
			flags: "failure", hasNext: true, next: taskLookup},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changes, o := afterSend(tc.t, tc.created, tc.err, now, b)
			if len(changes) != len(tc.to) || changes[0].From != ledger.Submitting {
				t.Fatalf("changes %+v, want to %v from SUBMITTING", changes, tc.to)
			}
			counted := 0
			for i, c := range changes {
				if c.To != tc.to[i] {
					t.Errorf("change %d to %s, want %s", i, c.To, tc.to[i])
				}
				if c.CountAttempt {
					counted++
				}
			}
			if want := map[bool]int{true: 1, false: 0}[tc.counted]; counted != want {
				t.Errorf("%d changes count the send, want %d", counted, want)
			}
			flags := map[[3]bool]string{{true, false, false}: "ok", {false, true, false}: "failure", {false, false, true}: "throttled"}[[3]bool{o.serviceOK, o.failure, o.throttled}]
			if flags != tc.flags {
				t.Errorf("outcome %+v, want %q", o, tc.flags)
			}
			if (o.fatal != nil) != tc.fatal || o.rowDone != tc.rowDone || (o.next != nil) != tc.hasNext {
				t.Errorf("outcome %+v", o)
			}
			if o.next != nil && (o.next.kind != tc.next || o.next.refused != tc.refused || o.next.ref != "R1" || o.next.at.Before(now)) {
				t.Errorf("follow-up %+v", *o.next)
			}
			if tc.pauseFor > 0 && !o.pause.Equal(now.Add(tc.pauseFor)) {
				t.Errorf("pause until %s, want %s", o.pause, now.Add(tc.pauseFor))
			}
		})
	}
}

// TestAfterNotFound is the grace of an UNKNOWN row that lookups do not find: looked up again,
// spaced, until it has been reported not found enough times over the whole grace; then never
// created, unless --no-resend-unknown keeps it, or it is stuck at MaxSendAttempts, which no
// grace changes.
func TestAfterNotFound(t *testing.T) {
	first := time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)
	g := graceRule{grace: 2 * time.Minute, lookups: 3}
	unknown := ledger.Payout{Ref: "R1", State: ledger.Unknown, Attempts: 1}
	stuck := ledger.Payout{Ref: "R1", State: ledger.Unknown, Attempts: MaxSendAttempts}
	for _, tc := range []struct {
		name  string
		p     ledger.Payout
		count int
		now   time.Time
		g     graceRule
		want  notFoundVerdict
		at    time.Time
	}{
		{"first not found", unknown, 1, first, g, lookAgain, first.Add(time.Minute)},
		{"second, spaced", unknown, 2, first.Add(time.Minute), g, lookAgain, first.Add(2 * time.Minute)},
		{"enough lookups, grace not over", unknown, 3, first.Add(90 * time.Second), g, lookAgain, first.Add(2 * time.Minute)},
		{"grace over, too few lookups", unknown, 2, first.Add(3 * time.Minute), g, lookAgain, first.Add(4 * time.Minute)},
		{"enough lookups over the grace", unknown, 3, first.Add(2 * time.Minute), g, provenNeverCreated, time.Time{}},
		{"--no-resend-unknown", unknown, 3, first.Add(2 * time.Minute), graceRule{grace: g.grace, lookups: 3, noResend: true}, keptUnknown, time.Time{}},
		{"stuck: no grace to wait", stuck, 1, first, g, stuckForGood, time.Time{}},
		{"stuck with --no-resend-unknown waits like any", stuck, 1, first, graceRule{grace: g.grace, lookups: 3, noResend: true}, lookAgain, first.Add(time.Minute)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, at := afterNotFound(tc.p, tc.count, first, tc.now, tc.g)
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
			changes := afterFound(tc.p, tc.got, "found", differences(tc.p, tc.got))
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
