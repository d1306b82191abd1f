// Package batch runs a payout file: a Runner reads and validates it (package read), records every
// payout in the ledger, sends them to the service exactly once each (a payout is durably
// SUBMITTING before it is sent, and an unknown outcome is looked up by its reference before
// anything is sent again), and writes the run's reports (package report). It also holds
// reconciliation (Runner.Reconcile looks payouts not yet final up at the service) and the exit
// codes the command line and folder mode (package watch) share.
package batch
