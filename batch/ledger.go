package batch

import "github.com/payout/payout/ledger"

// Ledger is what a run does to the ledger, and what the commands that share its Config do
// (reconcile, release, folder mode): the uses of the ledger's contract they make, so that any
// engine that keeps the contract serves them. *ledger.DB is one.
type Ledger interface {
	ledger.RunWrites
	ledger.RetryFiles
	ledger.ReportReads
	ledger.ReconcileStore
	ledger.ApprovalStore
}

// noLedger is l, or nil when l holds a nil *ledger.DB: a ledger never opened is none, and is
// told apart from one as a nil Ledger is.
func noLedger(l Ledger) Ledger {
	if db, ok := l.(*ledger.DB); ok && db == nil {
		return nil
	}
	return l
}
