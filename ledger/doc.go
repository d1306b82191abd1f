// Package ledger is the ledger of payouts: a SQLite file, or a PostgreSQL database named by a
// postgres:// URL, that records every payout by its external_invoice_ref, every state change as
// an event, and every run, so that a rerun resumes and never pays twice.
//
// The rest of the project calls it through the operations contract.go names, one small set per use
// (a run's writes, retry files, reports' reads, reconcile, callbacks, approvals, audit), and
// Ledger, all of them, which DB implements on either engine and the conformance suite in
// ledger/ledgertest tests on both. Its SQL is written once where the engines agree; dialect.go
// gives each engine the few fragments where they differ, the sqlite_*.go files hold what only a
// file has (opening checks, pragmas, the lock, quick_check, VACUUM and the WAL), and the
// postgres_*.go files what only a server has (its migrations, in migrations/postgres, applied
// under an advisory lock; the reference schema VerifyChain compares with; VACUUM FULL). The web
// console's sessions, which are no payout's, are a store of their own on the same database
// (ledger/consolestore, DB.ConsoleSessions).
//
// On PostgreSQL every write transaction takes one transaction advisory lock before it reads the
// chain's head, so that writers on several hosts extend one chain; row events hold each column
// as SQLite's quote() writes it (the schema's ledger_quote), so the chain's hashes are the same
// on both engines. There is no quick_check there: VerifyChain reads every row, and the server
// checks its own pages. Open refuses a database without the ledger's schema ("run `payout init`
// with that URL"), another application's, and a newer schema; Create refuses one with tables.
// Messages name a URL without its password (Redact).
//
// A ledger is made once, by Create, and opened afterwards by Open, which never makes one: a
// missing, empty or foreign file is refused (ErrNoLedger, ErrEmptyLedger, ErrNotLedger), since a
// ledger that does not know the payouts already made would make them again. Options.Verify adds
// checks that cost the same at any size (check.go says which), and a damaged file is refused
// (ErrDamaged) rather than paid on; VerifyChain's quick_check reads the whole file.
//
// The file is in WAL mode with synchronous=FULL, readable by its owner only (mode 0600, which
// SQLite copies to the -wal and -shm files). Open migrates an older schema to the current one
// with the embedded migrations. Apply calls from many goroutines are merged into shared durable
// transactions; Lock keeps a second paying process off the same file.
//
// Why only Create makes a ledger: a cron job on another host, or with a mistyped path, would
// otherwise start an empty ledger and pay everything again. Open refuses a missing file, an empty
// one, one that is not a ledger, and one shorter than its header says (a truncated copy); these
// checks cost the same at any size, and every read checks the cells of the pages it reads, so
// damage on a page a command reads stops it ("restore the last backup"). Damage elsewhere cannot
// hide a payout a run looks up. SQLite's full quick_check is left to `payout audit
// verify` (9 s at 2 million payouts). A new ledger is not checked reference by reference at the
// service: making one is an explicit step, and a lookup per row would halve every first run's
// rate.
//
// Size: about 2.3 KB a payout (4.5 GB for 2 million, measured 2026-11-24 with `make perf`): its
// four events with their hash chain (about 1.1 KB; the success callback's signed payload is kept
// as evidence in its event), the payout row (260 B), indexes (about 360 B), and nothing per input
// line unless the line is an exception (rejected, held, paid by another file, resumed, warned
// about). A rerun adds its run record, as does a reconcile that changes nothing. Counts and sums
// per state are kept by triggers (state_totals), so Counts reads a few rows at any size. An older
// schema is upgraded the first time the file is opened, in one transaction: adding the index on
// when payouts were recorded took 4.9 s, once, for 2 million payouts.
//
// A run's input lines are kept as they were read, valid or not (run_rows), apart from the
// payouts, which change as the service answers. RunLines joins the two: it is the one read of a
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
// On PostgreSQL anyone with the ledger's database role can write its rows, where on SQLite only
// the file's owner can. VerifyChain's comparison of the schema also reads what ALTER changes
// without redefining an object (a trigger disabled or set to replica, row level security and
// policies, rules, UNLOGGED), TRUNCATE of the tables that decide money is refused by triggers,
// and a role that may not create a schema (an auditor's, read-only) verifies with a reference
// made in its temporary schema. What the chain cannot tell, since it has no key: a chain
// rewritten whole with every hash recomputed, and events appended at its head with their hashes
// computed. The signed chain heads of runs' ends (`audit verify --head`) and signed packs are the
// evidence against the first; against the second, what decides money does not rest on the
// grants alone: a lowering of the approval policy carries its signatures, which every reader
// checks again (below). Every session (the ledger's, the hold's, the shared limiter's) has its
// search_path pinned to the ledger's schema, public (pinSchema): a schema named after the role,
// which the server's default path searches first, cannot stand in for the ledger's tables. A
// connection to another host that could fall back to plaintext is refused (postgres_tls.go).
//
// Events about the ledger itself have an empty reference and a kind for a state: the approval
// policy (EventPolicy; the latest one is the policy in force) and each signature a run was
// approved on (EventApproved), appended before the run records anything else. They are in the
// same chain, so a policy or an approval edited or deleted by hand breaks it; appending is left
// to the account that owns the file, the service account. The policy in force is read only from
// policy events that match their hashes and follow from one another (readPolicy): one written by
// hand pays nothing. The policy starts with a genesis (policygenesis.go): the chain's first
// event, written by Create with the policy `payout init` asks for, 0 included, or for a ledger
// made by an earlier version the event its upgrade appended; a chain without one has lost its
// policy and pays nothing (ErrPolicyLost), rather than fall back to no approval. A lowering from
// the genesis on stores the policy statement its signers signed and their SSHSIG signatures in
// its facts, which the hash covers; the ledger cannot judge them, so ApprovalPolicy gives every
// policy event from the genesis on (Changes), and every reader that decides money (a run, a dry
// run, folder mode; approval.CheckedPolicy) checks each lowering's signatures again against the
// allowed signers, which the database does not hold. A lowering appended with its hash computed
// but without them therefore pays nothing, however the database's grants were set; one dated
// earlier than the event before it (ClockAllowance) is refused too, since its signatures are
// checked as of its date. The same holds for approvals: each EventApproved stores its SSHSIG
// signature whole, and the plan statement it signed is stored once (EventPlan, its text as the
// payload, its SHA-256 in the facts the hash covers; a reader trusts only a text with that
// digest), so a run proves each send against them and audit verify checks them again. From the
// genesis on, VerifyChain also names a payout event whose move moves.go does not allow and an
// event dated back beyond ClockAllowance; the payload of any event about the ledger is checked
// (only EventPlan has one). StrayPayouts lists the payouts a run may send whose row disagrees
// with their own events, which a run never sends.
//
// A process that pays holds the ledger (Take, Hold) for its lifetime. On SQLite that is the file
// lock, which keeps every other paying process off; TakeWithin waits, bounded, for its holder to
// finish, as a routine overlap of cron's commands needs. On PostgreSQL several processes on several
// hosts pay from one ledger, with no coordinator: each holds a session of its own
// (postgres_hold*.go), registered in the processes table, and session advisory locks in it: one
// keyed by its random ID (it runs while that lock is held: Alive), one per input file it is
// paying (PayFile to DonePaying: a second process is refused, told who pays it) and one per inbox
// it leads (folder mode). The server releases them when the session ends, which short keepalives make seconds
// after a host dies.
//
// A process that is paused, or cut off, while it holds a claim may wake after its session ended
// and another process took its payouts over. So a Hold is also a Fence: right before each POST
// the sender proves it still holds its claims (Confirm: a round trip on the hold's own session,
// sent after the call; Held: a lease of leaseTTL since the last answered one, on CLOCK_BOOTTIME,
// which counts a suspension). A process that cannot prove it sends nothing. The file lock is
// always held. What no proof covers, a pause between the proof and the request leaving, the
// taking process's in-flight hold and the sender's journal of late sends (batch/journal) cover.
//
// A payout's states:
//
//	READY -> SUBMITTING -> SUBMITTED -> SUCCEEDED | FAILED
//	  |          |-> READY    (the request certainly never reached the service)
//	  |          '-> UNKNOWN -> (looked up by external_invoice_ref) -> SUBMITTED | READY | FAILED
//	  '-> REJECTED            (validation)
//
// A refusal by the service goes through UNKNOWN: it becomes FAILED only once a lookup finds no
// payout; a refusal that a later lookup finds made after all goes FAILED -> SUBMITTED. Every move
// of that machine is in one table (moves.go), and Apply refuses any other (ErrIllegalMove), so a
// bug above the ledger cannot move a payout backwards. SUBMITTING is made durable before the
// request is sent, so that a payout whose answer was lost is looked up, never sent blindly again.
// It names the process that sent it (payouts.claimed_by): a start recovers only the SUBMITTING
// payouts whose process a Liveness says is gone (batch/send), so it never takes a live process's.
package ledger
