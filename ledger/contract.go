package ledger

import (
	"context"
	"time"

	"github.com/payout/payout/ledger/consolestore"
)

// The ledger's contract with its callers: one small set of operations per use, each named by
// what calls it, and Ledger, all of them together, which is what an engine implements and what
// the conformance suite (ledger/ledgertest) tests. *DB, on SQLite or PostgreSQL, implements every
// one; what differs by engine (the file lock, Open's checks) stays outside
// them, and a test holds every other exported method of DB to being in one of them.

// RunWrites is what a run of a file does to the ledger while it pays: its record, its input
// lines and payouts, the lookups that decide what is new, the payouts it reads by state (the
// orphans a gone process left, the ones known to exist that prove lookups work), and every
// payout's moves.
type RunWrites interface {
	AddRun(ctx context.Context, r Run) error
	FinishRun(ctx context.Context, id string, status RunStatus, exitCode int, ended time.Time) error
	GetRun(ctx context.Context, id string) (Run, error)
	FindRuns(ctx context.Context, f RunFilter) ([]Run, error)
	Record(ctx context.Context, runID string, rows []RunRow, fresh []Payout) error
	Lookup(ctx context.Context, refs []string, how LookupFields) (map[string]Payout, error)
	Get(ctx context.Context, ref string) (Payout, error)
	WalkPayouts(ctx context.Context, set Filter, page int, fn func(Payout) error) error
	RecentPayees(ctx context.Context, since time.Time, limit int) (RecentPayees, error)
	RecentPayouts(ctx context.Context, payees []Payee, since time.Time) (map[string]Payout, error)
	Apply(ctx context.Context, changes ...Change) error
}

// RetryFiles is what writing and paying a retry file reads and records: a refused payout's one
// retry reference. The file is written in its run's columns (Run.Columns).
type RetryFiles interface {
	ClaimRetry(ctx context.Context, old, runID string, now time.Time, candidate func(root string, n int) string) (Retry, error)
	Retries(ctx context.Context, f RetryFilter) (map[string]Retry, error)
}

// ReportReads is what reports read: a run's lines with their payouts, the totals, the trail of
// one payout, the names the bank gave.
type ReportReads interface {
	GetRun(ctx context.Context, id string) (Run, error)
	FindRuns(ctx context.Context, f RunFilter) ([]Run, error)
	RunLines(ctx context.Context, runID string, how LineRead, fn func(ReportLine) error) error
	Counts(ctx context.Context, how CountRead) (Totals, error)
	Events(ctx context.Context, ref string) ([]Event, error)
	NameChecks(ctx context.Context, f NameFilter) ([]NameCheck, error)
}

// ReconcileStore is what reconciling reads and records: its own run, the payouts of its scope a
// page at a time, and the moves its lookups decide.
type ReconcileStore interface {
	AddRun(ctx context.Context, r Run) error
	FinishRun(ctx context.Context, id string, status RunStatus, exitCode int, ended time.Time) error
	GetRun(ctx context.Context, id string) (Run, error)
	FindRuns(ctx context.Context, f RunFilter) ([]Run, error)
	WalkPayouts(ctx context.Context, set Filter, page int, fn func(Payout) error) error
	RunLines(ctx context.Context, runID string, how LineRead, fn func(ReportLine) error) error
	Lookup(ctx context.Context, refs []string, how LookupFields) (map[string]Payout, error)
	Apply(ctx context.Context, changes ...Change) error
	Counts(ctx context.Context, how CountRead) (Totals, error)
	NameChecks(ctx context.Context, f NameFilter) ([]NameCheck, error)
	Retries(ctx context.Context, f RetryFilter) (map[string]Retry, error)
}

// CallbackStore is what the callback receiver does: find the payout an invoice names
// (WalkPayouts of Filter.InvoiceNo), move it, keep the bank's name for the account, and store
// every callback once; its health check reads the chain's head.
type CallbackStore interface {
	ChainHead(ctx context.Context) (ChainHead, error)
	WalkPayouts(ctx context.Context, set Filter, page int, fn func(Payout) error) error
	Apply(ctx context.Context, changes ...Change) error
	SetNameCheck(ctx context.Context, ref, displayName, check string) error
	StoreCallback(ctx context.Context, c StoredCallback) error
}

// ApprovalStore is the approval policy in force, the approvals a run was paid on, and the
// refusals runs met, as events of the ledger's own in the chain.
type ApprovalStore interface {
	ApprovalPolicy(ctx context.Context) (ApprovalPolicy, error)
	AppendLedgerEvents(ctx context.Context, events ...LedgerEvent) (ChainHead, error)
	Approvals(ctx context.Context, sha256 string) ([]Approval, error)
	LedgerEvents(ctx context.Context, f EventFilter) ([]LedgerEvent, error)
	StrayPayouts(ctx context.Context) (map[string]string, error)
	VerifySince(ctx context.Context, head ChainHead) ([]Finding, error)
	ChainHead(ctx context.Context) (ChainHead, error)
}

// AuditStore is what an auditor reads and what a purge does: the chain, verified whole, a run's
// evidence up to a head, and personal data masked without breaking the chain.
type AuditStore interface {
	VerifyChain(ctx context.Context) (ChainReport, error)
	ChainHead(ctx context.Context) (ChainHead, error)
	// VerifySince checks that a head signed at a run's end is still in the chain, as a run checks
	// the last one before it pays.
	VerifySince(ctx context.Context, head ChainHead) ([]Finding, error)
	RunEvents(ctx context.Context, runID string, upTo ChainHead) ([]EvidenceEvent, error)
	Events(ctx context.Context, ref string) ([]Event, error)
	Approvals(ctx context.Context, sha256 string) ([]Approval, error)
	GetRun(ctx context.Context, id string) (Run, error)
	Purge(ctx context.Context, req PurgeRequest) (PurgeResult, error)
	// LedgerEvents are the events about the ledger: audit verify checks the signatures the
	// approval events store.
	LedgerEvents(ctx context.Context, f EventFilter) ([]LedgerEvent, error)
}

// Ledger is every use's operations together, and Close: what an engine implements.
type Ledger interface {
	RunWrites
	RetryFiles
	ReportReads
	ReconcileStore
	CallbackStore
	ApprovalStore
	AuditStore
	ConsoleStore
	Close() error
}

// ConsoleStore gives the web console its sessions, which every console host on the ledger
// shares: found by the SHA-256 of a cookie's token, each with the passkey ceremony it has open.
type ConsoleStore interface {
	ConsoleSessions() *consolestore.Store
}
