package send

import (
	"testing"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/lookup"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/ledger"
)

// TestAfterSend is the answer to a POST, for every kind of answer: where the row goes, whether
// the send counts towards outcome.MaxSendAttempts, and what follows.
func TestAfterSend(t *testing.T) {
	now := time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)
	b := lookup.Backoff{Base: time.Millisecond, Max: 10 * time.Millisecond}
	send := lookup.Task{Ref: "R1", Kind: lookup.Send, At: now}
	for _, tc := range []struct {
		name     string
		created  api.CreateResult
		err      error
		t        lookup.Task
		to       []ledger.State
		counted  bool
		next     lookup.Kind
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
			hasNext: true, next: lookup.LookUp},
		{name: "refused", err: &api.Error{Kind: api.KindRejected}, t: send, to: []ledger.State{ledger.Unknown}, counted: true,
			flags: "ok", hasNext: true, next: lookup.LookUp, refused: true},
		{name: "duplicate", err: &api.Error{Kind: api.KindDuplicate}, t: send, to: []ledger.State{ledger.Unknown}, counted: true,
			flags: "ok", hasNext: true, next: lookup.LookUp},
		{name: "connection refused", err: &api.Error{Kind: api.KindRetryable}, t: send, to: []ledger.State{ledger.Ready},
			flags: "failure", hasNext: true, next: lookup.Send},
		{name: "429", err: &api.Error{Kind: api.KindRateLimited, RetryAfter: time.Second}, t: send, to: []ledger.State{ledger.Ready},
			flags: "throttled", hasNext: true, next: lookup.Send, pauseFor: time.Second},
		{name: "429, the last allowed", err: &api.Error{Kind: api.KindRateLimited, RetryAfter: time.Second},
			t: lookup.Task{Ref: "R1", Kind: lookup.Send, Limited: outcome.MaxRateLimited - 1}, to: []ledger.State{ledger.Ready}, flags: "throttled", rowDone: true, pauseFor: time.Second},
		{name: "auth refused", err: &api.Error{Kind: api.KindUnauthorized}, t: send, to: []ledger.State{ledger.Ready}, fatal: true},
		{name: "create endpoint missing", err: &api.Error{Kind: api.KindNotFound}, t: send, to: []ledger.State{ledger.Unknown}, fatal: true},
		{name: "no usable answer", err: &api.Error{Kind: api.KindOutcomeUnknown}, t: send, to: []ledger.State{ledger.Unknown}, counted: true,
			flags: "failure", hasNext: true, next: lookup.LookUp},
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
			flags := map[[3]bool]string{{true, false, false}: "ok", {false, true, false}: "failure", {false, false, true}: "throttled"}[[3]bool{o.ServiceOK, o.Failure, o.Throttled}]
			if flags != tc.flags {
				t.Errorf("outcome %+v, want %q", o, tc.flags)
			}
			if (o.Fatal != nil) != tc.fatal || o.RowDone != tc.rowDone || (o.Next != nil) != tc.hasNext {
				t.Errorf("outcome %+v", o)
			}
			if o.Next != nil && (o.Next.Kind != tc.next || o.Next.Refused != tc.refused || o.Next.Ref != "R1" || o.Next.At.Before(now)) {
				t.Errorf("follow-up %+v", *o.Next)
			}
			if tc.pauseFor > 0 && !o.Pause.Equal(now.Add(tc.pauseFor)) {
				t.Errorf("pause until %s, want %s", o.Pause, now.Add(tc.pauseFor))
			}
		})
	}
}
