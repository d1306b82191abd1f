package batch

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/batch/retry"
	"github.com/payout/payout/batch/runs"
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
		ApprovedBy: res.ApprovedBy, ApprovedAt: res.ApprovedAt, ChainHead: runs.ChainHeadText(ctx, db), Zone: r.cfg.Zone}
	var readErr error
	paths, summary, reportErr := report.WriteRunStream(r.cfg.ReportDir, r.reportInput(res.File), meta, func(add func(report.Row) error) error {
		readErr = runs.EachReportRow(ctx, db, res.RunID, !submitted, add)
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
	if err := runs.Close(ctx, db, res.RunID, res.ExitCode, ended); err != nil {
		return res, errors.Join(err, reportErr)
	}
	if reportErr == nil && r.cfg.SignHead != nil {
		// The run is paid and reported: a head left unsigned is said (stderr reaches cron's mail),
		// and changes nothing of the run's outcome.
		signed, err := approval.SignHead(ctx, db, r.cfg.SignHead, res.RunID, paths.CSV, meta.ChainHead)
		if err != nil {
			r.cfg.Logger.Error("the chain head the reports print was not signed", "run", res.RunID, "err", err)
		}
		res.Reports = append(res.Reports, signed...)
	}
	if reportErr != nil {
		res.Reports = nil
		return res, fmt.Errorf("%w: run %s %s with exit code %d, but `payout report %s` must write its reports from the ledger: %w",
			ErrReportsNotWritten, res.RunID, runs.ClosedAs(res.ExitCode), res.ExitCode, res.RunID, reportErr)
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

// tally takes a report's counts into res. Submitted counts the rows the service accepted in
// this run: accepted (SUCCEEDED or pending) and not skipped.
func tally(res Result, s report.Summary) Result {
	res.Rows, res.TotalAmount, res.Skipped, res.UnreadableAmounts = s.Rows, s.Total, s.Skipped, s.Unreadable
	var counts runs.StateCounts
	for _, t := range s.ByState {
		counts.AddN(ledger.State(t.State), t.Count)
	}
	res.Rejected, res.Succeeded, res.Pending = counts.Rejected, counts.Succeeded, counts.Pending
	res.Failed, res.Unknown, res.NotSent = counts.Failed, counts.Unknown, counts.NotSent
	res.Submitted = res.Succeeded + res.Pending - res.Skipped
	return res
}

// addRetryFile writes the run's retry file beside its reports and lists it in res.
func (r *Runner) addRetryFile(ctx context.Context, res *Result, fileRejected bool) error {
	if res.Rejected+res.Failed+res.Unknown+res.NotSent == 0 {
		return nil // every row is paid or pending: nothing to read back for a retry file
	}
	f, err := retry.Write(ctx, r.cfg.Ledger, res.RunID, r.cfg.ReportDir, r.reportInput(res.File), fileRejected, time.Time{}, r.cfg.Now())
	if err != nil {
		return err
	}
	res.RetryFile = f.CSV
	res.Reports = append(res.Reports, f.List()...)
	return nil
}
