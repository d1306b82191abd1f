package ledger

// The ledger's types; contract.go names the operations on them that the rest of the project calls.

import (
	"errors"
	"time"

	"github.com/shopspring/decimal"
)

// State is where a payout row stands. The package doc draws the machine.
type State string

// The states a payout moves through.
const (
	Ready      State = "READY"
	Submitting State = "SUBMITTING"
	Submitted  State = "SUBMITTED"
	Succeeded  State = "SUCCEEDED"
	Failed     State = "FAILED"
	Unknown    State = "UNKNOWN"
	Rejected   State = "REJECTED"
)

// Final reports whether nothing more will happen to a row in this state.
func (s State) Final() bool { return s == Succeeded || s == Failed || s == Rejected }

// Accepted reports whether the service accepted a row in this state: pending there (SUBMITTED)
// or paid (SUCCEEDED). Such a row is never sent again.
func (s State) Accepted() bool { return s == Submitted || s == Succeeded }

// OutcomeUnknown reports whether a row in this state may or may not exist at the service:
// UNKNOWN, or SUBMITTING (claimed for sending, perhaps sent). Only a lookup may move it on.
func (s State) OutcomeUnknown() bool { return s == Unknown || s == Submitting }

// Sentinel errors. Callers decide with errors.Is.
var (
	ErrNotFound      = errors.New("not in the ledger")
	ErrStateConflict = errors.New("payout is not in the expected state")
	ErrLocked        = errors.New("ledger is in use by another process")
)

// Payout is one row of the payouts table, keyed by Ref (external_invoice_ref).
type Payout struct {
	Ref               string
	RunID             string // the run that first recorded it
	Line              int    // its line in that run's file
	Recipient         string
	ProviderID        int64
	Bank              string
	Account           string
	Amount            decimal.Decimal
	Description       string
	State             State
	InvoiceNo         string // payout_invoice_no, once known
	TransactionStatus string // the service's last word, kept as text
	BankReferenceNo   string // from the callback
	Attempts          int    // POSTs that reached, or may have reached, the service (see batch)
	NotFoundCount     int    // consecutive lookups that said not found
	FirstNotFoundAt   time.Time
	LastError         string
	// RefusalConfirmed marks a FAILED payout whose refusal a lookup by external_invoice_ref
	// confirmed: the service created nothing, and it may be paid again under a new reference.
	RefusalConfirmed bool
	// ClaimedBy names the process (Process.Claimant) that last moved it to SUBMITTING: while
	// that process runs, nobody else sends it or makes it UNKNOWN.
	ClaimedBy string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// SameDetails reports whether q would pay the same beneficiary the same amount as p.
func (p Payout) SameDetails(q Payout) bool {
	return p.Ref == q.Ref && p.Account == q.Account && p.ProviderID == q.ProviderID && p.Amount.Equal(q.Amount)
}

// RunKind is what a run did.
type RunKind string

// The kinds of run.
const (
	KindRun       RunKind = "run"       // `payout run`, or one file of `watch`
	KindDryRun    RunKind = "dry-run"   // read and validated, nothing sent
	KindReconcile RunKind = "reconcile" // looked payouts up, sent nothing
)

// RunStatus is where a run stands.
type RunStatus string

// The statuses of a run.
const (
	RunRunning     RunStatus = "running"     // started, not ended (or its process is gone)
	RunFinished    RunStatus = "finished"    // ended by itself: its exit code says how it went
	RunAborted     RunStatus = "aborted"     // stopped before it had dealt with every row
	RunInterrupted RunStatus = "interrupted" // its process stopped before the run ended
	// RunAwaitingApproval: it paid nothing, its file's plan lacks the signatures the policy asks for.
	RunAwaitingApproval RunStatus = "awaiting-approval"
)

// Run is one invocation of `payout run` (or one file of `watch`) or of `reconcile`.
type Run struct {
	ID         string
	Kind       RunKind
	File       string // input file name as given
	FileSHA256 string
	StartedAt  time.Time
	EndedAt    time.Time // zero while running or when killed
	Status     RunStatus
	ExitCode   int
	// Source names the input a run read: the file's SHA-256, with the sheet of a workbook. The
	// runs of one source share their payouts' lines (see RunLines). Empty for other kinds.
	Source string
	// Rows is how many input rows the run read before it recorded any; 0 when not known.
	Rows int
	// Columns is the header of the run's input file, names in file order: its retry file is
	// written in the same columns. Nil for other kinds.
	Columns []string
}

// RunRow is one input line of one run, valid or not, as the report shows it.
type RunRow struct {
	RunID       string
	Line        int
	Ref         string
	Recipient   string
	ProviderID  int64 // zero when unresolved
	Bank        string
	Account     string
	Amount      string // exact decimal text when valid, else the raw cell
	Description string
	Rejected    bool
	Reason      string // why it was rejected (column: reason)
	Skipped     bool   // the payout was already accepted in an earlier run
	// PaidElsewhere marks a skipped line whose payout a run of another file recorded and paid.
	PaidElsewhere bool
}

// Change moves one payout from From to To (From == To records an event without a move) and
// sets the non-empty fields. Every Change appends one event.
type Change struct {
	Ref               string
	From              State
	To                State
	RunID             string
	InvoiceNo         string
	TransactionStatus string
	BankReferenceNo   string
	Error             string // becomes LastError
	CountAttempt      bool   // a POST that reached, or may have reached, the service
	CountNotFound     bool   // a lookup said not found: NotFoundCount++, FirstNotFoundAt set if zero
	ResetNotFound     bool   // a lookup found it, or a resend was decided
	ResetAttempts     bool   // a person released it: its count of sends starts again (the event records it)
	ConfirmRefusal    bool   // a lookup confirmed the service's refusal: RefusalConfirmed is set, for good
	RetryOf           string // the payout this one pays again, refused with nothing created (see Retry)
	ClaimedBy         string // the process sending it (Process.Claimant), set with the move to SUBMITTING
	DisplayName       string // the bank's name for the account, from a callback; kept with NameCheck when set
	NameCheck         string // NameNotCompared, NameMatch or NameMismatch: DisplayName against the recipient
	Detail            string // the event's text, for auditors
	Payload           string // raw data kept with the event (a callback's decoded JSON, say)
}

// Event is one line of a payout's audit trail.
type Event struct {
	ID      int64
	Ref     string
	RunID   string
	At      time.Time
	From    State
	To      State
	Detail  string
	Payload string
	Actor   string // who recorded it: "user@host", or "service callback"
}

// Filter selects payouts, which WalkPayouts hands over a page at a time, or at once when the
// filter names a few by an index of their own (InvoiceNo, Account, Latest). Every field set
// narrows it; the zero value selects every payout.
type Filter struct {
	States       []State   // in one of these states
	CreatedSince time.Time // recorded at or after this time
	// RefusedSince selects the payouts whose create the service refused (FAILED without an
	// invoice number) that last changed at or after it.
	RefusedSince time.Time
	// InvoiceNo selects the payout the service created under this payout_invoice_no, read by its
	// index: the payout a callback names.
	InvoiceNo string
	// Account, with Amount, selects the payouts of that amount to that account, leading zeros
	// aside (AccountDigits), read by their index: the payouts a callback may be for while the
	// ledger does not hold the invoice number it names.
	Account string
	Amount  decimal.Decimal
	// Latest keeps only the latest n payouts, from the latest run's last line back, in that order:
	// WalkPayouts reads them at once, from the latest run on, and stops at the nth payout, at any
	// size of the ledger. 0 keeps all; below 0 is refused.
	Latest int
}

// StoredCallback is a verified or rejected callback, kept in the ledger's callbacks table for
// whoever inspects the file (sqlite3): no command reads it back.
type StoredCallback struct {
	ReceivedAt time.Time
	InvoiceNo  string
	Verdict    string // "applied", "replay", "unknown-invoice", "amount-mismatch", ...
	Payload    string // empty when the event the callback made holds it
	// TokenSHA256 is the SHA-256 (hex) that names the callback, of what its token's signature
	// covers: a second delivery of the same token is counted on the first one's row, whatever
	// envelope carried it. Empty: never taken for a replay.
	TokenSHA256 string
}

// DB is the SQLite engine of every contract in contract.go.
var (
	_ Ledger         = (*DB)(nil)
	_ RunWrites      = (*DB)(nil)
	_ RetryFiles     = (*DB)(nil)
	_ ReportReads    = (*DB)(nil)
	_ ReconcileStore = (*DB)(nil)
	_ CallbackStore  = (*DB)(nil)
	_ ApprovalStore  = (*DB)(nil)
	_ AuditStore     = (*DB)(nil)
)
