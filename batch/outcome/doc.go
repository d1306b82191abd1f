// Package outcome decides each move of a payout's state from the state the ledger holds and an answer, with no I/O.
//
// Every decision of the run, reconcile, callbacks and release lives here as a function that
// takes a payout and what was said of it (a POST's answer, a lookup's, a callback, a person's
// release) and returns the ledger changes that record it, with what comes next for the row. It
// knows no task, pool, lookup loop or clock of its own: the caller does the asking and applies
// the changes. Which moves exist is the ledger's table (ledger.Allowed); every change decided
// here is a move of it, and the ledger refuses any other.
package outcome
