// Package lookup looks a payout up at the service by external_invoice_ref, tries again what got no usable answer, and gives it up within its bounds, for a run and for reconcile alike.
//
// It is the one skeleton of "look up, retry, give up": the tasks the pool schedules (a send or
// a lookup of a row), the backoffs and the bound on 429s, the proof that lookups work, and what
// a "not found" of a payout whose outcome is unknown does. What each answer does to a payout is
// package outcome's decision; the caller says what a found or a missing payout means to it
// (Steps): a run sends again what is proven never created, reconcile never sends.
package lookup
