package outcome

import (
	"errors"
	"fmt"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/ledger"
)

// MaxSendAttempts bounds the sends of one row, over all runs, that may have created a payout:
// past it, a row that lookups do not find is never sent again by a run or reconcile (a service
// that keeps losing what it was sent, or a lookup that cannot find what the service holds, is how
// a payout is made twice). It stays UNKNOWN, stuck, until a person checks with the service and
// runs `payout release`.
//
// A send counts (ledger.Payout.Attempts) when its request reached, or may have reached, the
// service: an answer (accepted, refused, duplicate) or no usable one (timeout after the request
// was written, a 5xx, an unreadable answer: the service's interface does not promise that a 5xx
// created nothing). A send whose answer proves it created nothing does not count: a connection
// refused or a request never written (api.KindRetryable), a 429, a refused auth token, a missing
// endpoint. Nor does an intent whose process died before it recorded the answer: the ledger
// cannot tell a death before the POST from one after it, counting both let an operator's kills
// strand rows that were never sent, and such a row is looked up and sent again only on the same
// proof as any other (not found over the whole grace while lookups of existing payouts work).
const MaxSendAttempts = 5

// MaxRateLimited bounds the 429s in a row for one row's send or lookup within a run.
const MaxRateLimited = 30

// Stuck reports whether p is a row that no run or reconcile sends again: UNKNOWN, at MaxSendAttempts.
func Stuck(p ledger.Payout) bool {
	return p.State == ledger.Unknown && p.Attempts >= MaxSendAttempts
}

// StuckMessage is what a run, reconcile and `payout status` say of a row at MaxSendAttempts that
// lookups do not find.
func StuckMessage(ref string, attempts int) string {
	return fmt.Sprintf("stuck: sent %d times with no answer; check with the service, then `payout release %s --reason ...`", attempts, ref)
}

// ErrUnauthorized stops a run: the service refused the auth token.
var ErrUnauthorized = errors.New("the service refused the auth token: " + AuthHint)

// AuthHint is what to check when the service refuses the auth token.
const AuthHint = "check PAYOUT_AUTH_TOKEN / PAYOUT_AUTH_TOKEN_FILE"

// Next is what comes next for a row in this run, after a decided move.
type Next int

const (
	Done        Next = iota // nothing more in this run
	LookUp                  // look it up by external_invoice_ref now
	LookUpLater             // look it up again after a backoff
	SendLater               // send it again after a backoff: nothing reached the service
	Throttled               // a 429: the same again after the service's wait
	Stop                    // the run stops (Decision.Fatal)
)

// Decision is a decided move: the changes that record it (their Ref and RunID are the caller's
// to set) and what comes next.
type Decision struct {
	Changes []ledger.Change
	Next    Next
	// ServiceOK: the service answered something; Failure: it did not (the circuit breaker
	// counts these); RateLimited: it answered 429.
	ServiceOK, Failure, RateLimited bool
	Refused                         bool  // the lookup to come confirms a refusal of the create
	Fatal                           error // with Stop
}

// Send is what a row's POST got back: the answer, or the error, and the 429s in a row that came
// before it; Wait is the wait before a retry (the service's Retry-After, or a backoff).
type Send struct {
	Created api.CreateResult
	Err     error
	Limited int
	Wait    time.Duration
}

// AfterSend decides what the answer to a row's POST does: the changes that record it (from
// SUBMITTING), and what comes next. A send is counted when it reached, or may have reached, the
// service (see MaxSendAttempts).
func AfterSend(s Send) Decision {
	if s.Err == nil {
		changes := Accepted(ledger.Submitting, s.Created.InvoiceNo, s.Created.TransactionStatus, "accepted by the service")
		changes[0].CountAttempt = true
		d := Decision{Changes: changes, ServiceOK: true}
		if s.Created.InvoiceNo == "" {
			d.Next = LookUp // the create answer carried no invoice number: the lookup fills it in
		}
		return d
	}
	msg := s.Err.Error()
	change := func(to ledger.State, counted bool, detail string) []ledger.Change {
		return []ledger.Change{{From: ledger.Submitting, To: to, Error: msg, CountAttempt: counted, Detail: detail}}
	}
	switch api.KindOf(s.Err) {
	case api.KindRejected:
		// A service has been seen to create the payout and still answer "fail": until a lookup
		// says otherwise, the payout may exist, and a FAILED row invites paying it again.
		return Decision{Changes: change(ledger.Unknown, true, "refused by the service: "+msg+"; looking it up by external_invoice_ref before it is final FAILED"),
			Next: LookUp, ServiceOK: true, Refused: true}
	case api.KindDuplicate:
		return Decision{Changes: change(ledger.Unknown, true, "the service says this reference already exists: looking it up: "+msg),
			Next: LookUp, ServiceOK: true}
	case api.KindRetryable:
		return Decision{Changes: change(ledger.Ready, false, "not sent, the request never reached the service: "+msg),
			Next: SendLater, Failure: true}
	case api.KindRateLimited:
		if s.Limited+1 >= MaxRateLimited {
			return Decision{Changes: change(ledger.Ready, false, fmt.Sprintf("rate limited by the service %d times in a row, nothing was created; not sent in this run", s.Limited+1)),
				RateLimited: true}
		}
		return Decision{Changes: change(ledger.Ready, false, fmt.Sprintf("rate limited by the service, nothing was created; retrying after %s", s.Wait)),
			Next: Throttled, RateLimited: true}
	case api.KindUnauthorized:
		return Decision{Changes: change(ledger.Ready, false, "the service refused the auth token; nothing was created"),
			Next: Stop, Fatal: ErrUnauthorized}
	case api.KindNotFound:
		return Decision{Changes: change(ledger.Unknown, false, "the service answered not found to a create: "+msg),
			Next: Stop, Fatal: errors.New("the service answered 404 to a create: check PAYOUT_BASE_URL")}
	}
	// Timeout, broken connection, 5xx: the payout may exist. It is looked up, never resent blindly.
	return Decision{Changes: change(ledger.Unknown, true, "no usable answer, the payout may exist; looking it up by external_invoice_ref: "+msg),
		Next: LookUpLater, Failure: true}
}

// Accepted moves a row the service holds to SUBMITTED, and on to its final state when the
// service already gives one.
func Accepted(from ledger.State, invoiceNo, status, how string) []ledger.Change {
	detail := fmt.Sprintf("%s: invoice %s, status %s", how, OrNone(invoiceNo), OrNone(status))
	changes := []ledger.Change{{From: from, To: ledger.Submitted, InvoiceNo: invoiceNo, TransactionStatus: status,
		ResetNotFound: true, Detail: detail}}
	switch status {
	case api.StatusSuccess:
		changes = append(changes, ledger.Change{From: ledger.Submitted, To: ledger.Succeeded, Detail: "the service reports SUCCESS"})
	case api.StatusFailed:
		changes = append(changes, ledger.Change{From: ledger.Submitted, To: ledger.Failed, Error: "the service reports FAILED",
			Detail: "the service reports FAILED"})
	}
	return changes
}

// OrNone is a field of the service's as an event says it: "(none)" when empty.
func OrNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// AcceptedEarlier reports whether a row in state s needs nothing more from a run: the service
// accepted it (pending, or paid). A retry file leaves such rows out.
func AcceptedEarlier(s ledger.State) bool {
	return s.Accepted()
}

// Unfinished reports whether a run has work on p: sending it (READY), or looking it up (UNKNOWN,
// or accepted without an invoice number to know it by). A SUBMITTING payout is a live process's
// claim, its own to finish: a run makes those of processes that are gone UNKNOWN before it takes
// any row.
func Unfinished(p ledger.Payout) bool {
	return p.State == ledger.Ready || p.State == ledger.Unknown || p.State == ledger.Submitted && p.InvoiceNo == ""
}

// ExplainAuth adds AuthHint to an error that says the service refused the auth token; any other
// error is returned as it is.
func ExplainAuth(err error) error {
	if api.KindOf(err) == api.KindUnauthorized {
		return fmt.Errorf("%w: %s", err, AuthHint)
	}
	return err
}
