package batch

import (
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/batch/intake"
	"github.com/payout/payout/batch/lookup"
)

// Result is the outcome of one run, and what `--json` prints of it. Rows = Rejected + Succeeded
// + Pending + Failed + Unknown + NotSent; Skipped counts rows (among Succeeded and Pending) that were
// accepted by the service in an earlier run.
type Result struct {
	RunID     string `json:"run_id"`
	File      string `json:"file"`
	SHA256    string `json:"sha256"`
	DryRun    bool   `json:"dry_run"`
	Rows      int    `json:"rows"`
	Rejected  int    `json:"rejected"`
	Submitted int    `json:"submitted"`
	Succeeded int    `json:"succeeded"`
	Pending   int    `json:"pending"`
	Failed    int    `json:"failed"`
	Unknown   int    `json:"unknown"`
	NotSent   int    `json:"not_sent"`
	Skipped   int    `json:"skipped"`
	// TotalAmount is the file's total: every row's amount as read, whatever its state.
	TotalAmount decimal.Decimal `json:"total_amount"`
	// UnreadableAmounts counts the rows whose amount is no number: not in TotalAmount, and
	// listed in the reports.
	UnreadableAmounts int      `json:"unreadable_amounts,omitempty"`
	Reports           []string `json:"reports"`
	ExitCode          int      `json:"exit_code"`
	Aborted           string   `json:"aborted,omitempty"`
	// ResumeAdvice says what to do about an aborted run (see ResumeAdvice); empty when it was not.
	ResumeAdvice string `json:"resume_advice,omitempty"`
	// StartedAt, EndedAt and ApprovedAt are in UTC: the JSON summary is for scripts, which read
	// them as RFC 3339 with offset.
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`

	// Stuck lists the rows this run found stuck: sent outcome.MaxSendAttempts times with no answer and not
	// found by a lookup. No run sends them again; see StuckMessage.
	Stuck []lookup.Stuck `json:"stuck,omitempty"`
	// SkippedOtherFile counts the skipped rows that a run of another file paid (see sameInput).
	SkippedOtherFile int `json:"skipped_other_file"`
	// Problems lists the first MaxProblems rejections, in file order; the reports have them all.
	Problems []intake.Problem `json:"problems,omitempty"`
	// Plan is what the file would pay, as a signature binds it; AwaitingApproval says why a run
	// paid nothing for want of signatures (exit 5); ApprovedBy names the principals whose
	// signatures it went ahead on, as the chain recorded them, at ApprovedAt.
	Plan             *intake.Plan `json:"plan,omitempty"`
	AwaitingApproval string       `json:"awaiting_approval,omitempty"`
	// NotProved, set with AwaitingApproval, says that the run stopped at a payout that the
	// ledger's stored evidence does not prove (approval.ErrNotProved): what signers do not fix.
	NotProved  bool      `json:"not_proved,omitempty"`
	ApprovedBy string    `json:"approved_by,omitempty"`
	ApprovedAt time.Time `json:"approved_at,omitzero"`
	// Warnings lists the first MaxProblems valid rows that deserve a look (an XLSX account stored
	// as a number); they are paid as read.
	Warnings []intake.Problem `json:"warnings,omitempty"`

	// RetryFile is the run's retry file (CSV; its XLSX twin is among Reports): empty when every
	// row is paid.
	RetryFile string `json:"retry_file,omitempty"`
}
