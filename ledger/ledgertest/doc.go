// Package ledgertest is the conformance suite that every ledger engine must pass: one set of
// tests, written against ledger.Ledger, run on each engine by a test of that engine's own.
//
// An engine is done when Run passes on it, not when its happy path works. The suite covers what
// the payout guarantees rest on: recording a file's payouts once, every move of the state
// machine and the refusal of every other (ErrIllegalMove) and of a stale From
// (ErrStateConflict), several writers on one ledger at once (goroutines of one handle and two
// handles, as a run and the callback receiver are) extending one hash chain that verifies, each
// paying process's claims on the payouts it sends left alone while it runs and found orphaned
// once it is gone, the
// running totals against a scan, runs and their lines, the finders of runs and payouts with
// their filters, one retry reference per refused payout, the bank's names kept beside their
// payouts, repeats and rejected rows found, a run's evidence, callbacks stored once with their
// replays counted, the approval policy's events, and a purge that masks personal data and keeps
// the chain. Engine-specific checks (a file's header, a server's locks) stay in the engine's
// tests.
//
// Engine.New makes a ledger per test; Engine.Again opens a second handle on it (the tests of two
// writers skip without one); Engine.Hold starts a paying process's hold (the test of claims
// skips without one); Engine.SQL reads the one table no operation returns (callbacks),
// in SQL that SQLite and PostgreSQL both accept.
package ledgertest
