// Package batch runs a payout file: a Runner reads and validates it (package read), records every
// payout in the ledger, sends them to the service exactly once each (a payout is durably
// SUBMITTING before it is sent, and an unknown outcome is looked up by its reference before
// anything is sent again), and writes the run's reports (package report). Around the run it holds
// reconciliation (Runner.Reconcile looks payouts not yet final up at the service), folder mode (a
// Watcher runs each file dropped into a directory) and the exit codes the command line and folder
// mode share.
package batch
