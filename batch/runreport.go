package batch

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/ledger"
)

// ErrReportsNotWritten is returned by Run, with a complete Result, when the run ended and was
// closed in the ledger but its reports could not be written.
var ErrReportsNotWritten = errors.New("reports not written")

// finish writes the run's reports from the ledger, a row at a time, and closes the run.
func (r *Runner) finish(ctx context.Context, res Result, aborted error, submitted bool) (Result, error) {
	db := r.cfg.Ledger
	run, err := db.GetRun(ctx, res.RunID)
	if err != nil {
		return res, err
	}
	ended := r.cfg.Now()
	res.EndedAt = ended.UTC()
	var notProved *approval.ProofError
	switch {
	case errors.As(aborted, &notProved):
		// Stopped at the till: running it again as it is would stop there again.
		res.AwaitingApproval, res.NotProved = notProved.Error(), true
	case aborted != nil:
		res.Aborted, res.ResumeAdvice = aborted.Error(), exitcode.ResumeAdvice(aborted)
	}
	meta := report.Summary{RunID: res.RunID, Kind: string(run.Kind), File: res.File, FileSHA256: res.SHA256,
		Started: run.StartedAt, Ended: ended, Aborted: res.Aborted, AbortAdvice: res.ResumeAdvice, Expected: run.Rows,
		ApprovedBy: res.ApprovedBy, ApprovedAt: res.ApprovedAt, ChainHead: ChainHeadText(ctx, db), Zone: r.cfg.Zone}
	var readErr error
	paths, summary, reportErr := report.WriteRunStream(r.cfg.ReportDir, r.reportInput(res.File), meta, func(add func(report.Row) error) error {
		readErr = EachReportRow(ctx, db, res.RunID, !submitted, add)
		return readErr
	})
	if readErr != nil {
		return res, readErr
	}
	res = tally(res, summary)
	if sum, ok := summary.TiesOut(); !ok {
		r.cfg.Logger.Error("the run's report does not tie out: its amounts by state do not add up to the file's total",
			"run", res.RunID, "total", summary.Total.StringFixed(2), "sum_by_state", sum.StringFixed(2))
	}
	switch {
	case res.NotProved:
		res.ExitCode = exitcode.AwaitingApproval
	case aborted != nil:
		res.ExitCode = exitcode.Aborted
	case !submitted:
		res.ExitCode = exitcode.Rejected
	case res.Rejected+res.Failed+res.Unknown+res.NotSent > 0:
		res.ExitCode = exitcode.Attention
	case res.SkippedOtherFile > 0 && !r.cfg.AllowPaidElsewhere:
		res.ExitCode = exitcode.Attention
	default:
		res.ExitCode = exitcode.OK
	}
	res.Reports = paths.List()
	if reportErr == nil {
		reportErr = r.addRetryFile(ctx, &res, !submitted)
	}
	// The run is closed even when its reports could not be written: its payouts are settled in the
	// ledger, and a run left "running" would look like one still sending. It is closed aborted
	// when aborted is set: its exit code is exitcode.Aborted then, and only then.
	if err := CloseRun(ctx, db, res.RunID, res.ExitCode, ended); err != nil {
		return res, errors.Join(err, reportErr)
	}
	if reportErr == nil && r.cfg.SignHead != nil {
		// The run is paid and reported: a head left unsigned is said (stderr reaches cron's mail),
		// and changes nothing of the run's outcome.
		if err := r.signHead(ctx, &res, paths.CSV, meta.ChainHead); err != nil {
			r.cfg.Logger.Error("the chain head the reports print was not signed", "run", res.RunID, "err", err)
		}
	}
	if reportErr != nil {
		res.Reports = nil
		return res, fmt.Errorf("%w: run %s %s with exit code %d, but `payout report %s` must write its reports from the ledger: %w",
			ErrReportsNotWritten, res.RunID, ClosedAs(res.ExitCode), res.ExitCode, res.RunID, reportErr)
	}
	return res, nil
}

// reportInput is the input name the reports are named after.
func (r *Runner) reportInput(path string) string {
	if r.reportName != "" {
		return r.reportName
	}
	return filepath.Base(path)
}

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

// tally takes a report's counts into res. Submitted counts the rows the service accepted in
// this run: accepted (SUCCEEDED or pending) and not skipped.
func tally(res Result, s report.Summary) Result {
	res.Rows, res.TotalAmount, res.Skipped, res.UnreadableAmounts = s.Rows, s.Total, s.Skipped, s.Unreadable
	var counts StateCounts
	for _, t := range s.ByState {
		counts.AddN(ledger.State(t.State), t.Count)
	}
	res.Rejected, res.Succeeded, res.Pending = counts.Rejected, counts.Succeeded, counts.Pending
	res.Failed, res.Unknown, res.NotSent = counts.Failed, counts.Unknown, counts.NotSent
	res.Submitted = res.Succeeded + res.Pending - res.Skipped
	return res
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
	return db.EachReportLine(ctx, runID, func(l ledger.ReportLine) error {
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
		row.Message = joinMessages(payoutMessage(*p, rr), rr.Reason)
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
		row.Message = joinMessages(payoutMessage(ledger.Payout{State: ledger.Ready}, rr), rr.Reason)
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
		msg := "outcome unknown: the payout may exist; run `payout reconcile` before anything else"
		if p.LastError != "" {
			msg += " (last error: " + p.LastError + ")"
		}
		return msg
	case p.State == ledger.Ready:
		return "not sent: the run stopped before this row; run the file again to resume"
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

// ReportLedger is what writing a run's reports again reads: its lines, the chain's head they
// print, and the approvals the run was paid on.
type ReportLedger interface {
	ledger.ReportReads
	ChainHead(ctx context.Context) (ledger.ChainHead, error)
	RunApprovals(ctx context.Context, runID string) ([]ledger.LedgerEvent, error)
	PlanStatements
}

// WriteReports writes a recorded run's reports again from the ledger (`payout report RUN`), with
// each row's state as of now. They are named after name (the base name of the run's file when
// empty) and apart from the run's own reports, which they never replace:
// `<name>.<run id>.regenerated-<now, UTC>.result.csv` and so on. Their times are shown in zone.
// They name as approvers only the signers whose stored signatures the allowed signers (the file
// at allowedSigners) prove (CheckStoredApprovals): none without it.
func WriteReports(ctx context.Context, db ReportLedger, runID, dir, name string, now time.Time, zone *time.Location, allowedSigners string) (report.Paths, error) {
	run, err := db.GetRun(ctx, runID)
	if err != nil {
		return report.Paths{}, fmt.Errorf("run %s: %w", runID, err)
	}
	meta := report.Summary{RunID: run.ID, Kind: string(run.Kind), File: run.File, FileSHA256: run.FileSHA256,
		Started: run.StartedAt, Ended: run.EndedAt, Aborted: stoppedReason(run), Regenerated: now, Expected: run.Rows,
		ChainHead: ChainHeadText(ctx, db), Zone: zone}
	if meta.ApprovedBy, meta.ApprovedAt, err = runApprover(ctx, db, runID, allowedSigners); err != nil {
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
