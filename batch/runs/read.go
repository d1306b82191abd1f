package runs

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/ledger"
)

// StateCounts counts payouts by state as the summaries of a run and of a reconciliation show them.
type StateCounts struct {
	Rejected, Succeeded, Pending, Failed, Unknown, NotSent int
}

// Add counts one payout in state s: SUBMITTED is pending at the service, SUBMITTING is unknown
// (its request may have reached the service), and READY was not sent.
func (c *StateCounts) Add(s ledger.State) { c.AddN(s, 1) }

// AddN counts n payouts in state s, as Add does.
func (c *StateCounts) AddN(s ledger.State, n int) {
	switch {
	case s == ledger.Rejected:
		c.Rejected += n
	case s == ledger.Succeeded:
		c.Succeeded += n
	case s == ledger.Submitted:
		c.Pending += n
	case s == ledger.Failed:
		c.Failed += n
	case s.OutcomeUnknown():
		c.Unknown += n
	default:
		c.NotSent += n
	}
}

// ReportRows reads a run back from the ledger as report rows (see EachReportRow), all at once:
// for what needs a run's rows together, such as folder mode's notes.
func ReportRows(ctx context.Context, db ledger.ReportReads, runID string, fileRejected bool) ([]report.Row, error) {
	var rows []report.Row
	err := EachReportRow(ctx, db, runID, fileRejected, func(row report.Row) error {
		rows = append(rows, row)
		return nil
	})
	return rows, err
}

// EachReportRow reads a run back from the ledger as report rows, one at a time in line order,
// each with its payout's state as of now: the end of a run, `payout report` and folder mode all
// read a run this way. fileRejected says why a valid row may have no payout: the file was
// rejected as a whole, or else the run stopped before it sent that row.
func EachReportRow(ctx context.Context, db ledger.ReportReads, runID string, fileRejected bool, fn func(report.Row) error) error {
	return db.RunLines(ctx, runID, ledger.LineRead{ReportOnly: true}, func(l ledger.ReportLine) error {
		return fn(reportRow(l, fileRejected))
	})
}

// reportRow is one line of a run as its report shows it.
func reportRow(l ledger.ReportLine, fileRejected bool) report.Row {
	rr, p := l.Row, l.Payout
	row := report.Row{Line: rr.Line, Ref: rr.Ref, Recipient: rr.Recipient, ProviderID: rr.ProviderID,
		Bank: rr.Bank, Account: rr.Account, Skipped: rr.Skipped && p != nil, PaidElsewhere: rr.PaidElsewhere && p != nil}
	switch {
	case p != nil:
		row.State = string(p.State)
		row.Amount = p.Amount
		row.InvoiceNo = p.InvoiceNo
		row.TransactionStatus = p.TransactionStatus
		row.RefusalConfirmed = p.RefusalConfirmed
		row.Message = JoinMessages(payoutMessage(*p, rr), rr.Reason)
		return row
	case rr.Rejected:
		row.State = string(ledger.Rejected)
		row.Message = rr.Reason
	case fileRejected:
		row.State = string(ledger.Ready)
		row.Message = "not submitted: the file was rejected; fix the rejected rows and run it again"
	default:
		// A valid line with no payout: the run stopped before recording it.
		row.State = string(ledger.Ready)
		row.Message = JoinMessages(payoutMessage(ledger.Payout{State: ledger.Ready}, rr), rr.Reason)
	}
	if amount, ok := ledger.AmountAsWritten(rr.Amount); ok {
		row.Amount = amount
	} else {
		row.AmountText = rr.Amount
	}
	return row
}

// payoutMessage says, in a report row, what a person should know of its payout's state.
func payoutMessage(p ledger.Payout, rr ledger.RunRow) string {
	switch {
	case rr.Skipped && rr.PaidElsewhere:
		return "" // the reason says which file paid it
	case rr.Skipped:
		return fmt.Sprintf("already accepted in run %s; not sent again", p.RunID)
	case outcome.Stuck(p):
		// Reconcile would only look it up again: the way out is the one the message names.
		return outcome.StuckMessage(p.Ref, p.Attempts)
	case p.State.OutcomeUnknown():
		msg := outcome.Words(p.State) + ": the payout may exist; run `payout reconcile` before anything else"
		if p.LastError != "" {
			msg += " (last error: " + p.LastError + ")"
		}
		return msg
	case p.State == ledger.Ready:
		return outcome.Words(p.State) + ": the run stopped before this row; run the file again to resume"
	case p.State == ledger.Failed:
		return p.LastError
	}
	return ""
}

// FailuresConfirmed reports whether every FAILED row of a report is known never to pay, so that
// paying it again under a new reference cannot pay twice.
func FailuresConfirmed(rows []report.Row) bool {
	for _, row := range rows {
		if ledger.State(row.State) == ledger.Failed && row.InvoiceNo == "" && !row.RefusalConfirmed {
			return false
		}
	}
	return true
}

// PaidElsewhere reports whether a report row was not sent because a run of another file paid it.
func PaidElsewhere(row report.Row) bool {
	return row.PaidElsewhere
}

// ApprovalReads is what naming a run's approvers reads: the approvals it was paid on, and the
// plan statements they sign.
type ApprovalReads interface {
	LedgerEvents(ctx context.Context, f ledger.EventFilter) ([]ledger.LedgerEvent, error)
	approval.PlanStatements
}

// ReportLedger is what writing a run's reports again reads: its lines, the chain's head they
// print, and the approvals the run was paid on.
type ReportLedger interface {
	ledger.ReportReads
	ChainHeads
	ApprovalReads
}

// WriteReports writes a recorded run's reports again from the ledger (`payout report RUN`), with
// each row's state as of now. They are named after name (the base name of the run's file when
// empty) and apart from the run's own reports, which they never replace:
// `<name>.<run id>.regenerated-<now, UTC>.result.csv` and so on. Their times are shown in zone.
// They name as approvers only the signers whose stored signatures the allowed signers (the file
// at allowedSigners) prove (approval.CheckStoredApprovals): none without it.
func WriteReports(ctx context.Context, db ReportLedger, runID, dir, name string, now time.Time, zone *time.Location, allowedSigners string) (report.Paths, error) {
	run, err := db.GetRun(ctx, runID)
	if err != nil {
		return report.Paths{}, fmt.Errorf("run %s: %w", runID, err)
	}
	meta := report.Summary{RunID: run.ID, Kind: string(run.Kind), File: run.File, FileSHA256: run.FileSHA256,
		Started: run.StartedAt, Ended: run.EndedAt, Aborted: stoppedReason(run), Regenerated: now, Expected: run.Rows,
		ChainHead: ChainHeadText(ctx, db), Zone: zone}
	if meta.ApprovedBy, meta.ApprovedAt, err = Approver(ctx, db, runID, allowedSigners); err != nil {
		return report.Paths{}, err
	}
	if name == "" {
		name = filepath.Base(run.File)
	}
	paths, _, err := report.WriteRunStream(dir, name, meta, func(add func(report.Row) error) error {
		return EachReportRow(ctx, db, runID, run.ExitCode == exitcode.Rejected, add)
	})
	return paths, err
}

// stoppedReason says why a run did not finish, as far as the ledger knows; empty when it finished.
func stoppedReason(run ledger.Run) string {
	switch run.Status {
	case ledger.RunAborted:
		return "the run stopped before it had sent every row (its reason was reported when it stopped)"
	case ledger.RunInterrupted:
		return "the process running it stopped before the run ended"
	}
	return ""
}

// ChainHeads reads the head of the ledger's chain.
type ChainHeads interface {
	ChainHead(ctx context.Context) (ledger.ChainHead, error)
}

// ChainHeadText is the ledger's chain head as a report prints it, read when the report is
// written: a report held by an auditor then pins the trail up to that event.
func ChainHeadText(ctx context.Context, db ChainHeads) string {
	head, err := db.ChainHead(ctx)
	if err != nil {
		return "unavailable: " + err.Error()
	}
	return head.String()
}

// Approver names the signers a recorded run went ahead on, for its reports: those whose
// signatures, stored in the chain, the allowed signers at allowedSigners prove.
func Approver(ctx context.Context, db ApprovalReads, runID, allowedSigners string) (string, time.Time, error) {
	events, err := db.LedgerEvents(ctx, ledger.EventFilter{Kind: ledger.EventApproved, RunID: runID})
	if err != nil || len(events) == 0 {
		return "", time.Time{}, err
	}
	checked, err := approval.CheckStoredApprovals(ctx, db, events, allowedSigners)
	if err != nil {
		return "", time.Time{}, err
	}
	var principals []string
	var at time.Time
	for _, a := range checked {
		if a.Problem == "" && len(a.Signer.Principals) > 0 {
			principals = append(principals, a.Signer.Principal())
			at = a.Event.At
		}
	}
	return ApprovedBy(principals), at, nil
}

// ApprovedBy is what a run's reports print as its approvers: the principals of the signatures it
// went ahead on (a key's principals comma separated, as each approval's event records them),
// each once, separated by ", ". The run's own reports and those written again from the chain
// print the same, and an evidence pack's verifier holds each name against those events.
func ApprovedBy(principals []string) string {
	var names []string
	for _, p := range principals {
		if !slices.Contains(names, p) {
			names = append(names, p)
		}
	}
	return strings.Join(names, ", ")
}

// JoinMessages joins two parts of a line's message, either of which may be empty.
func JoinMessages(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}
