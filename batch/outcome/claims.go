package outcome

import (
	"fmt"

	"github.com/payout/payout/ledger"
)

// Intent is the change recorded durably before a row's POST: SUBMITTING, claimed by the process
// claimant. The send is counted with its answer, not here (see MaxSendAttempts).
func Intent(p ledger.Payout, runID, claimant string) ledger.Change {
	return ledger.Change{Ref: p.Ref, RunID: runID, From: ledger.Ready, To: ledger.Submitting, ClaimedBy: claimant,
		Detail: fmt.Sprintf("sending %s MYR to %s at provider %d", p.Amount.StringFixed(2), MaskAccount(p.Account), p.ProviderID)}
}

// NotSent makes a SUBMITTING row READY again when the process that claimed it still holds the
// claim and certainly sent nothing (its turn of the rate limiter could not be had): why says so.
func NotSent(ref, runID, why string) ledger.Change {
	return ledger.Change{Ref: ref, RunID: runID, From: ledger.Submitting, To: ledger.Ready, Detail: "not sent: " + why}
}

// Orphaned makes UNKNOWN a SUBMITTING row whose claimant is gone: it stopped, or lost its claim,
// after recording its intent and before recording the answer, so its POST may or may not have
// reached the service, and the row is looked up before anything is sent again. On a ledger that
// several hosts share, a claimant found gone may still be sending (a host paused, or cut off, and
// not yet stopped): inFlight says how long the row is only looked up, never sent again.
func Orphaned(p ledger.Payout, runID, inFlight string) ledger.Change {
	claimant := "a process the ledger did not record"
	if p.ClaimedBy != "" {
		claimant = "process " + p.ClaimedBy
	}
	detail := fmt.Sprintf("found SUBMITTING at start, claimed by %s, which is gone: it stopped before it recorded the answer; looking it up before anything is sent", claimant)
	if inFlight != "" {
		detail += "; its request may still be in flight: not sent again for " + inFlight
	}
	return ledger.Change{Ref: p.Ref, From: ledger.Submitting, To: ledger.Unknown, RunID: runID, Detail: detail}
}

// AnswerNotRecorded says what became of a create whose answer the ledger did not take: the
// service answered invoice (none when it answered an error, answerErr) where the ledger holds
// ledgerInvoice; takenOver, another process had taken the payout over.
func AnswerNotRecorded(invoice, ledgerInvoice, answerErr string, takenOver bool) string {
	how := "the ledger did not take its answer"
	if takenOver {
		how = "sent after another process had taken the payout over"
	}
	switch {
	case invoice != "" && ledgerInvoice != "" && invoice != ledgerInvoice:
		return fmt.Sprintf("DUPLICATE: %s, the service accepted a second create, invoice %s, where the ledger holds invoice %s: the reference is held twice; recall one with the service", how, invoice, ledgerInvoice)
	case invoice != "" && ledgerInvoice == invoice:
		return fmt.Sprintf("%s, and answered with the invoice the ledger holds (%s): one payout", how, invoice)
	case invoice != "":
		return fmt.Sprintf("%s; accepted as invoice %s, kept in the journal of late sends: run `payout reconcile`, which names it if the reference is held twice", how, invoice)
	}
	return fmt.Sprintf("%s; the service answered %q: run `payout reconcile`", how, answerErr)
}

// Note records a note on a payout, its state unchanged.
func Note(p ledger.Payout, runID, detail string) ledger.Change {
	return ledger.Change{Ref: p.Ref, RunID: runID, From: p.State, To: p.State, Detail: detail}
}

// Words is what a payout in state s means to the people who read a report, a reconciliation or a
// retry file: the first words of every message about it there, to which each adds what to do.
func Words(s ledger.State) string {
	switch {
	case s == ledger.Ready:
		return "not sent"
	case s.OutcomeUnknown():
		return "outcome unknown"
	case s == ledger.Submitted:
		return "accepted, pending at the service"
	case s == ledger.Succeeded:
		return "paid"
	case s == ledger.Failed:
		return "refused by the service"
	}
	return "rejected"
}
