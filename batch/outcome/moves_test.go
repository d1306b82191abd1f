package outcome_test

import (
	"testing"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/ledger"
)

// Every change that a decision returns, for each state its callers hand it and each answer, is
// a move of the ledger's state machine (ledger.Allowed), and a decision of several changes
// chains them: the ledger would refuse anything else, so a decision outside its table is a bug
// found here rather than by a run.
func TestEveryDecisionIsAMoveOfTheLedger(t *testing.T) {
	all := []ledger.State{ledger.Ready, ledger.Submitting, ledger.Submitted, ledger.Unknown, ledger.Succeeded, ledger.Failed, ledger.Rejected}
	answers := []api.Payout{{}, {PayoutInvoiceNo: "INV-1", TransactionStatus: api.StatusPending, Value: ten},
		{PayoutInvoiceNo: "INV-2", TransactionStatus: api.StatusSuccess, Value: ten}, {TransactionStatus: api.StatusFailed, Value: ten}}
	errs := []error{nil, &api.Error{Kind: api.KindRejected}, &api.Error{Kind: api.KindDuplicate}, &api.Error{Kind: api.KindRetryable},
		&api.Error{Kind: api.KindRateLimited}, &api.Error{Kind: api.KindUnauthorized}, &api.Error{Kind: api.KindNotFound},
		&api.Error{Kind: api.KindOutcomeUnknown}}
	var decided [][]ledger.Change
	add := func(changes ...ledger.Change) { decided = append(decided, changes) }
	for _, err := range errs {
		for _, created := range []api.CreateResult{{}, {InvoiceNo: "INV-1", TransactionStatus: api.StatusSuccess}, {InvoiceNo: "INV-1", TransactionStatus: api.StatusFailed}} {
			add(outcome.AfterSend(outcome.Send{Created: created, Err: err}).Changes...)
		}
	}
	// The run looks up UNKNOWN rows and accepted ones without an invoice number; a refusal the
	// service did not keep to is found FAILED.
	for _, s := range []ledger.State{ledger.Unknown, ledger.Submitted, ledger.Failed} {
		for _, got := range answers {
			p := ledger.Payout{Ref: "R1", State: s, Amount: ten}
			add(outcome.AfterFound(p, got, "found", outcome.Differences(p, got))...)
		}
	}
	unknown := ledger.Payout{Ref: "R1", State: ledger.Unknown, Attempts: outcome.MaxSendAttempts}
	add(outcome.NotFoundCounted(1))
	add(outcome.StuckNoted(unknown))
	add(outcome.NotResent(3, time.Minute, "why"))
	add(outcome.NeverCreated(3, time.Minute, true))
	add(outcome.ConfirmRefusal(unknown, true))
	add(outcome.ConfirmRefusal(unknown, false))
	add(outcome.Released(unknown, "ops@host", "checked"))
	add(outcome.RetryLinked(ledger.Retry{New: "R1-R1", Old: "R1", RunID: "run-1"}, "run-2"))
	for _, s := range []ledger.State{ledger.Unknown, ledger.Submitted, ledger.Succeeded, ledger.Failed} {
		p := ledger.Payout{Ref: "R1", State: s}
		add(outcome.NotYetVisible(p))
		for _, reconcile := range []bool{false, true} {
			add(outcome.LookupGivenUp(p, reconcile, false, 3, "HTTP 503"), outcome.LookupGivenUp(p, reconcile, true, 30, "HTTP 429"))
		}
	}
	// Reconcile looks up every state but REJECTED; callbacks name any payout.
	for _, s := range all {
		for _, confirmed := range []bool{false, true} {
			for _, invoice := range []string{"", "INV-1"} {
				p := ledger.Payout{Ref: "R1", State: s, Amount: ten, InvoiceNo: invoice, RefusalConfirmed: confirmed}
				if s != ledger.Rejected && s != ledger.Ready && s != ledger.Submitting {
					for _, got := range answers {
						changes, _ := outcome.ReconcileFound(p, got)
						add(changes...)
					}
				}
				if s != ledger.Rejected && s != ledger.Ready && s != ledger.Submitting && s != ledger.Unknown {
					changes, _, _ := outcome.ReconcileMissing(p, func() bool { return true })
					add(changes...)
				}
				for _, cb := range []api.Callback{callback("SUCCESS", 2, ten, "BR-1", "{}"), callback("FAILED", 3, ten, "", "{}")} {
					_, changes := outcome.AfterCallback(cb, p)
					add(changes...)
				}
			}
		}
	}
	for _, changes := range decided {
		for i, c := range changes {
			if !ledger.Allowed(c.From, c.To) {
				t.Errorf("decided %s -> %s (%s): not a move of the ledger's state machine", c.From, c.To, c.Detail)
			}
			if i > 0 && c.From != changes[i-1].To {
				t.Errorf("decided %s -> %s after a move to %s", c.From, c.To, changes[i-1].To)
			}
		}
	}
	if len(decided) < 100 {
		t.Fatalf("only %d decisions checked", len(decided))
	}
}
