// Package ledger is the SQLite ledger of payouts: one file that records every payout by its
// external_invoice_ref, every state change as an event, and every run, so that a rerun resumes
// and never pays twice.
//
// A ledger is made once, by Create, and opened afterwards by Open, which never makes one: a
// missing, empty or foreign file is refused (ErrNoLedger, ErrEmptyLedger, ErrNotLedger), since a
// ledger that does not know the payouts already made would make them again. Options.Verify adds
// checks that cost the same at any size (check.go says which), and a damaged file is refused
// (ErrDamaged) rather than paid on; QuickCheck reads the whole file.
//
// The file is in WAL mode with synchronous=FULL, readable by its owner only (mode 0600, which
// SQLite copies to the -wal and -shm files). Open migrates an older schema to the current one
// with the embedded migrations. Apply calls from many goroutines are merged into shared durable
// transactions; Lock keeps a second paying process off the same file.
//
// A run's input lines are kept as they were read, valid or not (run_rows), apart from the
// payouts, which change as the service answers. RunReport joins the two: it is the one read of a
// run, for its own reports at its end, for `payout report` later, for folder mode's notes and
// for reconciling one run.
//
// Every event is in a hash chain: its hash (HashEvent: SHA-256 over a length-prefixed encoding
// of its id, reference, run, time, states, text, actor, program version, facts, personal digest
// and the previous event's hash) is computed from the head read inside the transaction that
// appends it, so two processes writing one ledger (a run and the callback receiver) extend one
// chain. Personal data is covered only through a digest salted per payout (payout_salts), so
// Purge can mask it, and delete the salt, without breaking the chain. The rows of the other
// tables that decide money or are shown (runs, run lines, callbacks, retries, approvals) are in
// the same chain through row events (row_events: each write of such a row, column by column;
// trail.go's registry says which tables, Coverage how each table is covered). VerifyChain walks
// the chain, replays each payout's events against every column of its row, compares each covered
// row with its latest row event, recomputes the state totals, compares the schema (triggers
// included) with what the migrations make, and runs PRAGMA quick_check. A ledger made before the
// chain, or before it covered a table, is sealed into it by the migration that adds it.
//
// A payout's states:
//
//	READY -> SUBMITTING -> SUBMITTED -> SUCCEEDED | FAILED
//	  |          |-> FAILED   (the service refused it: nothing was created)
//	  |          '-> UNKNOWN -> (looked up by external_invoice_ref) -> SUBMITTED | READY
//	  '-> REJECTED            (validation)
//
// SUBMITTING is made durable before the request is sent, so that a payout whose answer was lost
// is looked up, never sent blindly again.
package ledger
