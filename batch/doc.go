// Package batch runs a payout file: a Runner reads and validates it (package read), records every
// payout in the ledger, sends them to the service exactly once each (a payout is durably
// SUBMITTING before it is sent, and an unknown outcome is looked up by its reference before
// anything is sent again), and writes the run's reports (package report) and, when some rows are
// left unpaid, its retry file (WriteRetryFile): those rows, to be corrected and run. Its lookups,
// which never send (Runner.NewChecker), serve reconciliation (package reconcile), and its exit
// codes the command line and folder mode (package watch).
package batch
