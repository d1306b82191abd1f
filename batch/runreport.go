package batch

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/ledger"
)

// RunFinished is the status of a run that ended by itself (its exit code says how it went).
const RunFinished = "finished"

// ErrReportsNotWritten is returned by Run, with a complete Result, when the run ended and was
// closed in the ledger but its reports could not be written.
var ErrReportsNotWritten = errors.New("reports not written")

// finish reads the run back from the ledger, writes its reports and closes the run.
func (r *Runner) finish(ctx context.Context, res Result, aborted error, submitted bool) (Result, error) {
	db := r.cfg.Ledger
	rows, skipped, err := ReportRows(ctx, db, res.RunID, !submitted)
	if err != nil {
		return res, err
	}
	res = tally(res, rows, skipped)
	switch {
	case aborted != nil:
		res.ExitCode = ExitAborted
		res.Aborted = aborted.Error()
	case !submitted:
		res.ExitCode = ExitRejected
	case res.Rejected+res.Failed+res.Unknown+res.NotSent > 0:
		res.ExitCode = ExitAttention
	case res.SkippedOtherFile > 0 && !r.cfg.AllowPaidElsewhere:
		res.ExitCode = ExitAttention
	default:
		res.ExitCode = ExitOK
	}
	run, err := db.GetRun(ctx, res.RunID)
	if err != nil {
		return res, err
	}
	ended := r.cfg.Now()
	res.EndedAt = ended
	meta := report.Summary{RunID: res.RunID, Kind: run.Kind, File: res.File, FileSHA256: res.SHA256,
		Started: run.StartedAt, Ended: ended, Skipped: res.Skipped, Aborted: res.Aborted}
	meta.ChainHead = ChainHeadText(ctx, db)
	paths, reportErr := report.WriteRun(r.cfg.ReportDir, r.reportInput(res.File), report.Summarize(meta, rows), rows)
	res.Reports = paths.List()
	status := RunFinished
	if aborted != nil {
		status = "aborted"
	}
	// The run is closed even when its reports could not be written: its payouts are settled in the
	// ledger, and a run left "running" would look like one still sending.
	if err := db.FinishRun(ctx, res.RunID, status, res.ExitCode, ended); err != nil {
		return res, errors.Join(err, reportErr)
	}
	if reportErr != nil {
		res.Reports = nil
		return res, fmt.Errorf("%w: run %s %s with exit code %d, but `payout report %s` must write its reports from the ledger: %w",
			ErrReportsNotWritten, res.RunID, status, res.ExitCode, res.RunID, reportErr)
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
func (c *StateCounts) Add(s ledger.State) {
	switch s {
	case ledger.Rejected:
		c.Rejected++
	case ledger.Succeeded:
		c.Succeeded++
	case ledger.Submitted:
		c.Pending++
	case ledger.Failed:
		c.Failed++
	case ledger.Unknown, ledger.Submitting:
		c.Unknown++
	default:
		c.NotSent++
	}
}

// tally counts report rows by state into res.
func tally(res Result, rows []report.Row, skipped map[int]bool) Result {
	res.Rows = len(rows)
	total := decimal.Zero
	var counts StateCounts
	for _, row := range rows {
		total = total.Add(row.Amount)
		counts.Add(ledger.State(row.State))
		if skipped[row.Line] {
			res.Skipped++
		} else if ledger.State(row.State) == ledger.Succeeded || ledger.State(row.State) == ledger.Submitted {
			res.Submitted++
		}
	}
	res.TotalAmount = total
	res.Rejected, res.Succeeded, res.Pending = counts.Rejected, counts.Succeeded, counts.Pending
	res.Failed, res.Unknown, res.NotSent = counts.Failed, counts.Unknown, counts.NotSent
	return res
}

// ReportRows reads a run back from the ledger as report rows, each with its payout's state as
// of now: the end of a run, `payout report` and folder mode's notes all read a run this way. The
// map marks the lines that the service accepted before this run. fileRejected says why a valid
// row may have no payout: the file was rejected as a whole, or else the run stopped before it
// sent that row.
func ReportRows(ctx context.Context, db *ledger.DB, runID string, fileRejected bool) ([]report.Row, map[int]bool, error) {
	lines, err := db.RunReport(ctx, runID)
	if err != nil {
		return nil, nil, err
	}
	rows := make([]report.Row, 0, len(lines))
	skipped := make(map[int]bool)
	for _, l := range lines {
		rows = append(rows, reportRow(l, fileRejected))
		if l.Row.Skipped {
			skipped[l.Row.Line] = true
		}
	}
	return rows, skipped, nil
}

// reportRow is one line of a run as its report shows it.
func reportRow(l ledger.ReportLine, fileRejected bool) report.Row {
	rr, p := l.Row, l.Payout
	row := report.Row{Line: rr.Line, Ref: rr.Ref, Recipient: rr.Recipient, ProviderID: rr.ProviderID,
		Bank: rr.Bank, Account: rr.Account}
	switch {
	case p != nil:
		row.State = string(p.State)
		row.Amount = p.Amount
		row.InvoiceNo = p.InvoiceNo
		row.TransactionStatus = p.TransactionStatus
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
	if amount, err := decimal.NewFromString(rr.Amount); err == nil {
		row.Amount = amount
	} else {
		row.AmountText = rr.Amount
	}
	return row
}

// payoutMessage says, in a report row, what a person should know of its payout's state.
func payoutMessage(p ledger.Payout, rr ledger.RunRow) string {
	switch {
	case rr.Skipped && strings.HasPrefix(rr.Reason, paidElsewherePrefix):
		return "" // the reason says which file paid it
	case rr.Skipped:
		return fmt.Sprintf("already accepted in run %s; not sent again", p.RunID)
	case Stuck(p):
		// Reconcile would only look it up again: the way out is the one the message names.
		return StuckMessage(p.Ref, p.Attempts)
	case p.State == ledger.Unknown || p.State == ledger.Submitting:
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
		if ledger.State(row.State) == ledger.Failed && !FailureConfirmed(row.InvoiceNo, row.Message) {
			return false
		}
	}
	return true
}

// PaidElsewhere reports whether a report row was not sent because a run of another file paid it.
func PaidElsewhere(row report.Row) bool {
	return strings.HasPrefix(row.Message, paidElsewherePrefix)
}

// finishDryRun reports a dry run from the rows as read: nothing was recorded or sent.
func (r *Runner) finishDryRun(res Result, started time.Time, parsed *parsedFile) (Result, error) {
	rows := parsed.reportRows()
	res = tally(res, rows, nil)
	res.ExitCode = ExitOK
	if res.Rejected > 0 {
		res.ExitCode = ExitRejected
	}
	res.EndedAt = r.cfg.Now()
	meta := report.Summary{RunID: res.RunID, Kind: "dry-run", File: res.File, FileSHA256: res.SHA256,
		Started: started, Ended: res.EndedAt, DryRun: true}
	paths, err := report.WriteRun(r.cfg.ReportDir, filepath.Base(res.File), report.Summarize(meta, rows), rows)
	if err != nil {
		return res, fmt.Errorf("write reports: %w", err)
	}
	res.Reports = paths.List()
	return res, nil
}

// reportRows is the dry run's view: valid rows READY, the rest REJECTED.
func (p *parsedFile) reportRows() []report.Row {
	rows := make([]report.Row, 0, len(p.rows))
	for _, rr := range p.runRows(false) {
		row := report.Row{Line: rr.Line, Ref: rr.Ref, Recipient: rr.Recipient, ProviderID: rr.ProviderID,
			Bank: rr.Bank, Account: rr.Account, State: string(ledger.Ready), Message: "valid (dry run: nothing sent)"}
		if amount, err := decimal.NewFromString(rr.Amount); err == nil {
			row.Amount = amount
		} else {
			row.AmountText = rr.Amount
		}
		if rr.Rejected {
			row.State, row.Message = string(ledger.Rejected), rr.Reason
		} else {
			row.Message = joinMessages(row.Message, rr.Reason)
		}
		rows = append(rows, row)
	}
	return rows
}

// WriteReports writes a recorded run's reports again from the ledger (`payout report RUN`), with
// each row's state as of now. They are named after name (the base name of the run's file when
// empty) and apart from the run's own reports, which they never replace:
// `<name>.<run id>.regenerated-<now, UTC>.result.csv` and so on.
func WriteReports(ctx context.Context, db *ledger.DB, runID, dir, name string, now time.Time) (report.Paths, error) {
	run, err := db.GetRun(ctx, runID)
	if err != nil {
		return report.Paths{}, fmt.Errorf("run %s: %w", runID, err)
	}
	rows, skipped, err := ReportRows(ctx, db, runID, run.ExitCode == ExitRejected)
	if err != nil {
		return report.Paths{}, err
	}
	meta := report.Summary{RunID: run.ID, Kind: run.Kind, File: run.File, FileSHA256: run.FileSHA256,
		Started: run.StartedAt, Ended: run.EndedAt, Skipped: len(skipped), Aborted: stoppedReason(run), Regenerated: now}
	meta.ChainHead = ChainHeadText(ctx, db)
	if name == "" {
		name = filepath.Base(run.File)
	}
	return report.WriteRun(dir, name, report.Summarize(meta, rows), rows)
}

// stoppedReason says why a run did not finish, as far as the ledger knows; empty when it finished.
func stoppedReason(run ledger.Run) string {
	switch run.Status {
	case "aborted":
		return "the run stopped before it had sent every row (its reason was reported when it stopped)"
	case "interrupted":
		return "the process running it stopped before the run ended"
	}
	return ""
}
