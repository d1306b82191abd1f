// Package batch runs a payout file: a Runner reads and validates it, records every payout in the
// ledger, sends them to the service exactly once each, and writes the run's reports and retry
// file. It only orchestrates; each step of a row's way is a package of its own:
//
//   - read: the row is read from the CSV or XLSX and validated (read.Reader, read.Validator).
//   - intake: the file's passes check each chunk against the ledger and hold repeats (package
//     repeats), build the plan a signature binds, and record the chunk (intake.Recorder).
//   - approval: the plan's signatures are judged at the door (approval.Judge), and each send is
//     proved at the till against what the ledger stores of them (approval.Gather, Proof.Check).
//   - send: the payout's intent is recorded and its claim proved before its request leaves
//     (send.Submission); the pool paces it (package pool); lookups settle what is unknown
//     (package lookup); what each answer does is package outcome's.
//   - ledger: every move is a transaction with its event in the chain.
//   - runs: the run is closed and read back row by row for its reports (package report) and its
//     retry file (package retry).
//
// Its exit codes (package exitcode) serve the command line and folder mode (package watch);
// reconciliation, which never sends, is package reconcile.
//
// # How a run pays each row exactly once
//
//  1. Validate the whole file first, streaming and holding no rows: a first pass checks every
//     row, and checks them against the ledger a chunk at a time (the next chunk is read while the
//     last is checked). One bad or held row and nothing is sent (exitcode.Rejected) unless partial
//     payment is allowed. A reference the ledger already holds with another amount, account or
//     bank is rejected, never overwritten; a reference twice in a file rejects both rows.
//  2. Record, in a second pass, a chunk at a time: each chunk's new payouts (READY) in one
//     transaction, then handed to the workers while the next chunk is recorded. A chunk that
//     differs from what the first pass validated stops the run before it is recorded
//     (intake.ErrFileChanged). A kill between chunks leaves the rest unrecorded and unsent, and the
//     rerun resumes them exactly once.
//  3. Recover: rows left SUBMITTING by a process that is gone (Config.Liveness; on SQLite, every
//     process but the file lock's holder; on PostgreSQL, every process whose session lock is
//     free), or by a stopped run of this one, become UNKNOWN and are looked up first. A live
//     process's rows are its own: never sent or made UNKNOWN here.
//  4. Send: a worker proves the payout approved, commits READY -> SUBMITTING durably
//     (synchronous=FULL) naming this process (Config.Process), proves its claim, then POSTs, then
//     commits the answer with its event. The workers share one limiter (rate and burst).
//  5. Classify the answer (api classifies it once): accepted -> SUBMITTED; refused (a 4xx or a
//     "fail" envelope) -> looked up once, FAILED only if the service holds nothing; a timeout, a
//     5xx or an unreadable answer -> UNKNOWN, never sent again blindly; nothing reached the
//     service -> READY, retried with backoff; 429 -> every worker waits Retry-After; 401/403 ->
//     the run stops.
//  6. Resolve UNKNOWN: found -> SUBMITTED. It is sent again only when three lookups over the
//     unknown grace said "not found" and a lookup of a payout known to exist worked in this run
//     (never with --no-resend-unknown); the run says what it waits for. Otherwise it stays for
//     reconciliation.
//  7. Stuck rows: a row sent 5 times (a send counts when it may have reached the service) with no
//     answer and not found is stuck: never sent again. The summary, the report, --json and
//     `payout status REF` say to check with the service and then `payout release REF --reason`,
//     which refuses while the service finds the payout and records who decided.
//  8. Stop safely: 10 service failures in a row or SIGINT/SIGTERM stop dispatching; requests in
//     flight are recorded; the run exits exitcode.Aborted and a rerun resumes. Then every input line is
//     reported.
//
// The client never sends an Idempotency-Key and never follows redirects. The tests run against a
// sandbox that pays a repeated reference again, so exactly-once comes from this package, not
// from the service; `make crashtest` SIGKILLs the built binary at seeded moments over a 1,000-row
// file at rates of 50 to 100 a second against a sandbox that loses answers and returns 5xx and
// 429, and counts the payouts at the sandbox.
//
// # Reruns, other files, repeats and retries
//
// A rerun of the same file (the same bytes, or the same name while its earlier run had not paid
// everything) is quiet about the rows already done. Rows that a run of another file paid are
// skipped and reported as "already paid by FILE in run RUN on DATE" (exit 4 unless
// --allow-paid-elsewhere); other bytes under the name of a run that paid everything are another
// file.
//
// A row new to the ledger that pays the account, bank and amount of a payout recorded within the
// repeat window under another reference, or of an earlier row of the file, is held, like a
// rejected row. FAILED and REJECTED payouts never count. The check is an indexed lookup per
// chunk, the same at any size. A pass that sends nothing (a dry run, the check before a run)
// first reads the accounts paid within the window when there are no more than a chunk's worth (a
// monthly or weekly payroll's window is usually empty) and looks up only the rows paying one of
// them; the pass that records and sends looks every row up as it records it.
//
// A retry file holds every row not SUCCEEDED or pending, in the input's own columns and order
// (columns the ledger does not keep are empty), plus retry_reason. Rows keep their reference (a
// row of unknown outcome is looked up, never sent blindly), except a FAILED row known to have
// created nothing, offered as REF-R1 (-R2, ...; a hash shortens a long reference) and recorded
// as a retry of it before the file is written, so that every retry file of a run offers the same
// reference. If reconciliation later finds the old payout, the retry row is refused. Reconcile
// writes a new retry file (.reconciled-TIME.retry.csv) for every run whose unpaid rows changed,
// so a run's newest retry file holds every row still unpaid, and older ones can pay only rows
// still unpaid.
//
// # Reports
//
// Reports are written as rows come from the ledger (runs.EachReportRow), so a million-row run holds
// a few thousand rows at a time; each file is written under a temporary name, synced (not for a
// dry run) and renamed. The XLSX continues on sheets "Rows 2", ... past the spreadsheet's row
// limit and cuts cells at 32,767 characters with a marker. `payout report RUN` writes
// .regenerated-TIME files and never overwrites a run's own.
//
// # How it is tested
//
// End-to-end tests pay at --rate 100 against a sandbox answering in 5 to 20 ms over HTTP on
// 127.0.0.1, with SQLite ledgers in t.TempDir(), real XLSX files and the built binary; one short
// run has no rate limit; a run of five chunks is SIGKILLed and resumed. Tests also hold the
// import direction cmd -> batch/... -> {ledger, api, batch/report -> templates}, 500 lines a
// production file and 80 a function.
//
// # Known limits
//
//   - An XLSX dry run as a whole peaks at about twice the memory of excelize's Rows() read of the
//     same file (43 against 22 MiB at 100,000 rows, measured 2026-11-24 with `make perf`), though
//     the reader alone is at 1.01 times: the rest is the code a dry run also runs (SQLite, the
//     HTTP client, the report writers: about 8 MiB) and the garbage collector's headroom over
//     the live heap. A memory limit brought it to 1.5 times but cost a third more CPU, so none is
//     set.
//   - A run without a rate limit reaches about a quarter of a bare loop's rate: every row waits
//     for two durable commits. At the rates services allow this costs nothing measurable.
//   - Lines a writer appends to a claimed file between the check after its run and its move to
//     done (microseconds) would go unseen.
package batch
