// Package batchtest gives the tests of the batch packages one harness: a sandbox of the payout
// service on loopback, a client, a ledger in a temporary folder, a run's configuration over them,
// and generated payroll files with the checks that every row was paid exactly once.
package batchtest
