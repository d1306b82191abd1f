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

var ten = decimal.RequireFromString("10.00")

// TestAfterSend is the answer to a POST, for every kind of answer: where the row goes, whether
// the send counts towards MaxSendAttempts, and what comes next.
func TestAfterSend(t *testing.T) {
	for _, tc := range []struct {
		name    string
		send    outcome.Send
		to      []ledger.State
		counted bool
		next    outcome.Next
		flags   string
		refused bool
		fatal   bool
	}{
		{"accepted, pending", outcome.Send{Created: api.CreateResult{InvoiceNo: "INV-1", TransactionStatus: api.StatusPending}},
			[]ledger.State{ledger.Submitted}, true, outcome.Done, "ok", false, false},
		{"accepted, success", outcome.Send{Created: api.CreateResult{InvoiceNo: "INV-1", TransactionStatus: api.StatusSuccess}},
			[]ledger.State{ledger.Submitted, ledger.Succeeded}, true, outcome.Done, "ok", false, false},
		{"accepted, failed", outcome.Send{Created: api.CreateResult{InvoiceNo: "INV-1", TransactionStatus: api.StatusFailed}},
			[]ledger.State{ledger.Submitted, ledger.Failed}, true, outcome.Done, "ok", false, false},
		{"accepted without an invoice number", outcome.Send{}, []ledger.State{ledger.Submitted}, true, outcome.LookUp, "ok", false, false},
		{"refused", outcome.Send{Err: &api.Error{Kind: api.KindRejected}}, []ledger.State{ledger.Unknown}, true, outcome.LookUp, "ok", true, false},
		{"duplicate", outcome.Send{Err: &api.Error{Kind: api.KindDuplicate}}, []ledger.State{ledger.Unknown}, true, outcome.LookUp, "ok", false, false},
		{"connection refused", outcome.Send{Err: &api.Error{Kind: api.KindRetryable}}, []ledger.State{ledger.Ready}, false, outcome.SendLater, "failure", false, false},
		{"429", outcome.Send{Err: &api.Error{Kind: api.KindRateLimited}, Wait: time.Second}, []ledger.State{ledger.Ready}, false, outcome.Throttled, "throttled", false, false},
		{"429, the last allowed", outcome.Send{Err: &api.Error{Kind: api.KindRateLimited}, Limited: outcome.MaxRateLimited - 1},
			[]ledger.State{ledger.Ready}, false, outcome.Done, "throttled", false, false},
		{"auth refused", outcome.Send{Err: &api.Error{Kind: api.KindUnauthorized}}, []ledger.State{ledger.Ready}, false, outcome.Stop, "", false, true},
		{"create endpoint missing", outcome.Send{Err: &api.Error{Kind: api.KindNotFound}}, []ledger.State{ledger.Unknown}, false, outcome.Stop, "", false, true},
		{"no usable answer", outcome.Send{Err: &api.Error{Kind: api.KindOutcomeUnknown}}, []ledger.State{ledger.Unknown}, true, outcome.LookUpLater, "failure", false, false},
		{"a broken connection", outcome.Send{Err: errors.New("connection reset")}, []ledger.State{ledger.Unknown}, true, outcome.LookUpLater, "failure", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := outcome.AfterSend(tc.send)
			if len(d.Changes) != len(tc.to) || d.Changes[0].From != ledger.Submitting {
				t.Fatalf("changes %+v, want to %v from SUBMITTING", d.Changes, tc.to)
			}
			counted := 0
			for i, c := range d.Changes {
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
			flags := map[[3]bool]string{{true, false, false}: "ok", {false, true, false}: "failure", {false, false, true}: "throttled"}[[3]bool{d.ServiceOK, d.Failure, d.RateLimited}]
			if flags != tc.flags || d.Next != tc.next || d.Refused != tc.refused || (d.Fatal != nil) != tc.fatal {
				t.Errorf("decision %+v, want next %d, flags %q, refused %t, fatal %t", d, tc.next, tc.flags, tc.refused, tc.fatal)
			}
		})
	}
}

// TestConfirmRefusal: a refused row that a lookup did not find is final FAILED with its refusal
// confirmed, a typed fact, only when "not found" is trusted.
func TestConfirmRefusal(t *testing.T) {
	p := ledger.Payout{Ref: "R1", State: ledger.Unknown, LastError: "fail"}
	c := outcome.ConfirmRefusal(p, true)
	if c.To != ledger.Failed || !c.ConfirmRefusal || c.Error != "fail; "+outcome.RefusalConfirmed {
		t.Errorf("trusted: %+v, want FAILED with the refusal confirmed", c)
	}
	c = outcome.ConfirmRefusal(p, false)
	if c.To != ledger.Unknown || c.ConfirmRefusal || !strings.Contains(c.Detail, "needs reconciliation") {
		t.Errorf("not trusted: %+v, want a note on the UNKNOWN row", c)
	}
	for _, tc := range []struct {
		p    ledger.Payout
		want bool
	}{
		{ledger.Payout{State: ledger.Failed}, false},
		{ledger.Payout{State: ledger.Failed, LastError: outcome.RefusalConfirmed}, false}, // text is not the fact
		{ledger.Payout{State: ledger.Failed, RefusalConfirmed: true}, true},
		{ledger.Payout{State: ledger.Failed, InvoiceNo: "INV-1"}, true},
	} {
		if got := outcome.FailureConfirmed(tc.p); got != tc.want {
			t.Errorf("FailureConfirmed(%+v) = %t, want %t", tc.p, got, tc.want)
		}
	}
}

// TestReconcileFound is reconcile's lookup that found the payout, for each state: the run's way
// for rows still moving, and a final state kept against a service that now says otherwise.
func TestReconcileFound(t *testing.T) {
	pending := api.Payout{PayoutInvoiceNo: "INV-1", TransactionStatus: api.StatusPending, Value: ten}
	success := api.Payout{PayoutInvoiceNo: "INV-1", TransactionStatus: api.StatusSuccess, Value: ten}
	failed := api.Payout{PayoutInvoiceNo: "INV-1", TransactionStatus: api.StatusFailed, Value: ten}
	paid := ledger.Payout{Ref: "R1", State: ledger.Succeeded, Amount: ten, InvoiceNo: "INV-1"}
	for _, tc := range []struct {
		name     string
		p        ledger.Payout
		got      api.Payout
		to       []ledger.State
		mismatch string
		note     string
	}{
		{"unknown", ledger.Payout{Ref: "R1", State: ledger.Unknown, Amount: ten}, pending, []ledger.State{ledger.Submitted}, "", "the outcome was unknown"},
		{"submitted, not final", ledger.Payout{Ref: "R1", State: ledger.Submitted, Amount: ten}, pending, []ledger.State{ledger.Submitted}, "", "not final"},
		{"submitted, now paid", ledger.Payout{Ref: "R1", State: ledger.Submitted, Amount: ten, InvoiceNo: "INV-1"}, success,
			[]ledger.State{ledger.Submitted, ledger.Succeeded}, "", ""},
		{"refused, but held", ledger.Payout{Ref: "R1", State: ledger.Failed, Amount: ten}, pending, []ledger.State{ledger.Submitted}, "", "never pay it again"},
		{"paid, as the ledger has it", paid, success, nil, "", ""},
		{"paid, the service now says FAILED", paid, failed, []ledger.State{ledger.Succeeded}, words.MismatchFinalChanged, "the ledger keeps SUCCEEDED"},
		{"paid, another amount", paid, api.Payout{PayoutInvoiceNo: "INV-1", TransactionStatus: api.StatusSuccess, Value: decimal.RequireFromString("11")},
			[]ledger.State{ledger.Succeeded}, words.MismatchAmount, ""},
		{"failed at the service, as the ledger has it", ledger.Payout{Ref: "R1", State: ledger.Failed, Amount: ten, InvoiceNo: "INV-1"}, failed, nil, "", ""},
		{"ready: nothing to record", ledger.Payout{Ref: "R1", State: ledger.Ready, Amount: ten}, pending, nil, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changes, v := outcome.ReconcileFound(tc.p, tc.got)
			var to []ledger.State
			for _, c := range changes {
				to = append(to, c.To)
			}
			if len(to) != len(tc.to) || (len(to) > 0 && changes[0].From != tc.p.State) {
				t.Fatalf("changes %+v, want to %v from %s", changes, tc.to, tc.p.State)
			}
			for i := range to {
				if to[i] != tc.to[i] {
					t.Errorf("change %d to %s, want %s", i, to[i], tc.to[i])
				}
			}
			if tc.mismatch != "" && !strings.Contains(strings.Join(v.Mismatches, ","), tc.mismatch) || tc.mismatch == "" && len(v.Mismatches) > 0 {
				t.Errorf("mismatches %v, want %q", v.Mismatches, tc.mismatch)
			}
			if !strings.Contains(v.Note, tc.note) || tc.note == "" && v.Note != "" {
				t.Errorf("note %q, want %q", v.Note, tc.note)
			}
		})
	}
}

// TestReconcileMissing is reconcile's "not found" for a payout that is not UNKNOWN: a refusal is
// confirmed once, when trusted; an accepted payout the service does not know breaks "not found".
func TestReconcileMissing(t *testing.T) {
	refused := ledger.Payout{Ref: "R1", State: ledger.Failed, LastError: "fail"}
	for _, tc := range []struct {
		name              string
		p                 ledger.Payout
		trusted           bool
		confirm, asked    bool
		broken            bool
		mismatch, noteHas string
	}{
		{"refused, trusted", refused, true, true, true, false, "", "refused the payout"},
		{"refused, not trusted", refused, false, false, true, false, "", "refused the payout"},
		{"refused, already confirmed: not asked", ledger.Payout{Ref: "R1", State: ledger.Failed, RefusalConfirmed: true}, true, false, false, false, "", "refused the payout"},
		{"accepted", ledger.Payout{Ref: "R1", State: ledger.Succeeded, InvoiceNo: "INV-1"}, true, false, false, true, words.MismatchUnknown, "investigate"},
		{"submitted", ledger.Payout{Ref: "R1", State: ledger.Submitted, InvoiceNo: "INV-1"}, true, false, false, true, words.MismatchUnknown, "investigate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := false
			changes, v, broken := outcome.ReconcileMissing(tc.p, func() bool { asked = true; return tc.trusted })
			confirmed := len(changes) == 1 && changes[0].ConfirmRefusal
			if confirmed != tc.confirm || asked != tc.asked || broken != tc.broken {
				t.Errorf("changes %+v, asked %t, broken %t; want confirmed %t, asked %t, broken %t", changes, asked, broken, tc.confirm, tc.asked, tc.broken)
			}
			for _, c := range changes {
				if c.From != tc.p.State || c.To != tc.p.State {
					t.Errorf("change %+v moves the payout: reconcile's not found keeps its state", c)
				}
			}
			if strings.Join(v.Mismatches, ",") != tc.mismatch || !strings.Contains(v.Note, tc.noteHas) {
				t.Errorf("view %+v, want mismatch %q and %q in its note", v, tc.mismatch, tc.noteHas)
			}
		})
	}
}

func callback(status string, id int64, amount decimal.Decimal, bankRef, raw string) api.Callback {
	return api.Callback{Payload: api.CallbackPayload{InvoiceNo: "INV-1", InvoiceStatus: status, InvoiceStatusID: id, Amount: amount,
		BankReferenceNo: bankRef}, RawPayload: []byte(raw)}
}

// TestAfterCallback is a verified callback for each state of its payout: only a SUCCESS of the
// ledger's amount for a payout the service holds moves it.
func TestAfterCallback(t *testing.T) {
	ok := callback("SUCCESS", 2, ten, "BR-1", `{"invoice_status":"SUCCESS"}`)
	for _, tc := range []struct {
		name    string
		cb      api.Callback
		p       ledger.Payout
		verdict string
		to      []ledger.State
	}{
		{"submitted", ok, ledger.Payout{Ref: "R1", State: ledger.Submitted, Amount: ten}, outcome.CallbackApplied, []ledger.State{ledger.Succeeded}},
		{"unknown: through SUBMITTED", ok, ledger.Payout{Ref: "R1", State: ledger.Unknown, Amount: ten}, outcome.CallbackApplied,
			[]ledger.State{ledger.Submitted, ledger.Succeeded}},
		{"replay", ok, ledger.Payout{Ref: "R1", State: ledger.Succeeded, Amount: ten, BankReferenceNo: "BR-1"}, outcome.CallbackReplay, nil},
		{"replay, another bank reference", ok, ledger.Payout{Ref: "R1", State: ledger.Succeeded, Amount: ten, BankReferenceNo: "BR-9"},
			outcome.CallbackReplayMismatch, []ledger.State{ledger.Succeeded}},
		{"failed in the ledger", ok, ledger.Payout{Ref: "R1", State: ledger.Failed, Amount: ten}, outcome.CallbackConflict, []ledger.State{ledger.Failed}},
		{"ready", ok, ledger.Payout{Ref: "R1", State: ledger.Ready, Amount: ten}, outcome.CallbackUnexpectedState, []ledger.State{ledger.Ready}},
		{"submitting: flagged, with no event the ledger refuses", ok, ledger.Payout{Ref: "R1", State: ledger.Submitting, Amount: ten},
			outcome.CallbackUnexpectedState, nil},
		{"rejected: flagged, with no event the ledger refuses", ok, ledger.Payout{Ref: "R1", State: ledger.Rejected, Amount: ten},
			outcome.CallbackUnexpectedState, nil},
		{"another amount", callback("SUCCESS", 2, decimal.RequireFromString("9"), "", "{}"), ledger.Payout{Ref: "R1", State: ledger.Submitted, Amount: ten},
			outcome.CallbackAmountMismatch, []ledger.State{ledger.Submitted}},
		{"not SUCCESS", callback("FAILED", 3, ten, "", "{}"), ledger.Payout{Ref: "R1", State: ledger.Submitted, Amount: ten},
			outcome.CallbackNotSuccess, []ledger.State{ledger.Submitted}},
		{"SUCCESS with another id", callback("SUCCESS", 3, ten, "", "{}"), ledger.Payout{Ref: "R1", State: ledger.Submitted, Amount: ten},
			outcome.CallbackNotSuccess, []ledger.State{ledger.Submitted}},
		{"the bank says no", callback("SUCCESS", 2, ten, "", `{"bank_response_success":false}`), ledger.Payout{Ref: "R1", State: ledger.Submitted, Amount: ten},
			outcome.CallbackNotSuccess, []ledger.State{ledger.Submitted}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			verdict, changes := outcome.AfterCallback(tc.cb, tc.p)
			if verdict != tc.verdict || len(changes) != len(tc.to) {
				t.Fatalf("verdict %s, changes %+v; want %s to %v", verdict, changes, tc.verdict, tc.to)
			}
			for i, c := range changes {
				if c.To != tc.to[i] || c.Ref != "R1" {
					t.Errorf("change %d %+v, want to %s", i, c, tc.to[i])
				}
			}
			if len(changes) > 0 && (changes[0].From != tc.p.State || changes[len(changes)-1].Payload != string(tc.cb.RawPayload)) {
				t.Errorf("changes %+v: want from %s, the last carrying the payload", changes, tc.p.State)
			}
		})
	}
}

// TestRelease: only an UNKNOWN payout is released, with its count of sends started again.
func TestRelease(t *testing.T) {
	for _, s := range []ledger.State{ledger.Ready, ledger.Submitting, ledger.Submitted, ledger.Succeeded, ledger.Failed, ledger.Rejected} {
		if err := outcome.Releasable(ledger.Payout{Ref: "R1", State: s}); !errors.Is(err, outcome.ErrReleaseRefused) {
			t.Errorf("release of a %s payout: %v, want ErrReleaseRefused", s, err)
		}
	}
	p := ledger.Payout{Ref: "R1", State: ledger.Unknown, Attempts: outcome.MaxSendAttempts}
	if err := outcome.Releasable(p); err != nil {
		t.Fatalf("release of an UNKNOWN payout: %v", err)
	}
	c := outcome.Released(p, "ops@host", "checked by phone")
	if c.From != ledger.Unknown || c.To != ledger.Ready || !c.ResetAttempts || !c.ResetNotFound || !strings.Contains(c.Detail, "ops@host") {
		t.Errorf("release %+v", c)
	}
}

// TestLookupGivenUp: a row whose lookups got no usable answer keeps its state; the run leaves it
// for reconcile, reconcile reports it not checked, and both keep the last error.
func TestLookupGivenUp(t *testing.T) {
	p := ledger.Payout{Ref: "R1", State: ledger.Unknown}
	for _, tc := range []struct {
		reconcile, limited bool
		want               string
	}{
		{false, false, "lookup failed 3 times: left for `payout reconcile`: boom"},
		{false, true, "lookup rate limited 3 times in a row: left for `payout reconcile`"},
		{true, false, "reconcile: lookup failed 3 times, not checked: boom"},
		{true, true, "reconcile: lookup rate limited 3 times in a row (HTTP 429), not checked: boom"},
	} {
		c := outcome.LookupGivenUp(p, tc.reconcile, tc.limited, 3, "boom")
		if c.From != ledger.Unknown || c.To != ledger.Unknown || c.Error != "boom" || c.Detail != tc.want {
			t.Errorf("reconcile %t, limited %t: %+v, want %q", tc.reconcile, tc.limited, c, tc.want)
		}
	}
}

func TestAcceptedEarlier(t *testing.T) {
	for _, s := range []ledger.State{ledger.Ready, ledger.Submitting, ledger.Submitted, ledger.Unknown, ledger.Succeeded, ledger.Failed, ledger.Rejected} {
		if got, want := outcome.AcceptedEarlier(s), s == ledger.Submitted || s == ledger.Succeeded; got != want {
			t.Errorf("AcceptedEarlier(%s) = %t, want %t", s, got, want)
		}
	}
}
