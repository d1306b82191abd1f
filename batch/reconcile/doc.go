// Package reconcile settles what the ledger does not know yet: Run looks the payouts of a scope
// (every payout not yet final, a file's run, or everything since a date) up at the service, a
// chunk of rows at a time, with lookups of its own (package lookup, as a run's), records what
// changed, and writes a report that ties out to the files and flags what does not match. It never
// sends a payout; it writes again the retry file of each run whose unpaid rows it changed
// (retry.Write).
package reconcile
