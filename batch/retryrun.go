package batch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/batch/retry"
	"github.com/payout/payout/batch/runs"
	"github.com/payout/payout/ledger"
)

// ErrRetryOfPaid rejects a row paying a retry (a reference a retry file derived for a payout the
// service refused) when the ledger no longer holds that payout as refused: a reconciliation found
// it at the service after all, and paying the retry would pay twice.
var ErrRetryOfPaid = errors.New("a retry of a payout the service holds after all")

// checkRetries rejects the chunk's valid rows new to the ledger that would pay a retry of a
// payout no longer FAILED, or that pay another account, bank or amount than the payout they
// retry (a retry file saved by a spreadsheet loses the leading zeros of account numbers).
func checkRetries(ctx context.Context, db scanLedger, rows []fileRow, existing map[string]ledger.Payout) error {
	var refs []string
	for i := range rows {
		if _, recorded := existing[rows[i].payment.Ref]; rows[i].valid() && !recorded && retry.MayBeRef(rows[i].payment.Ref) {
			refs = append(refs, rows[i].payment.Ref)
		}
	}
	retries, err := db.Retries(ctx, refs)
	if err != nil || len(retries) == 0 {
		return err
	}
	for i := range rows {
		row := &rows[i]
		retry, ok := retries[row.payment.Ref]
		if !row.valid() || !ok {
			continue
		}
		old, err := db.Get(ctx, retry.Old)
		if err != nil {
			return err
		}
		if old.State != ledger.Failed {
			row.errs = append(row.errs, &read.RowError{Line: row.raw.Line, Column: read.ColRef, Value: row.payment.Ref,
				Err: fmt.Errorf("%w: it replaces %s, which the ledger now holds as %s; delete this row", ErrRetryOfPaid, old.Ref, old.State)})
			continue
		}
		row.errs = append(row.errs, retryChanges(row, old)...)
	}
	return nil
}

// ErrRetryChanged rejects a retry row that pays another account, bank or amount than the payout
// it retries: a retry pays what was refused, as it was recorded.
var ErrRetryChanged = errors.New("a retry must pay what the payout it retries would have paid")

// retryChanges lists where a retry row differs from the payout it retries, each with both values.
func retryChanges(row *fileRow, old ledger.Payout) []*read.RowError {
	pay := row.payment
	var errs []*read.RowError
	differs := func(col, value, what, here, there, why string) {
		errs = append(errs, &read.RowError{Line: row.raw.Line, Column: col, Value: value,
			Err: fmt.Errorf("%w: %s %s here, %s in %s, the payout it retries%s; put back %s's, or give the row a new reference to pay other details",
				ErrRetryChanged, what, here, there, old.Ref, why, old.Ref)})
	}
	if pay.Account != old.Account {
		why := ""
		if ledger.AccountDigits(pay.Account) == ledger.AccountDigits(old.Account) {
			why = " (a spreadsheet may have dropped leading zeros)"
		}
		differs(read.ColAccount, row.raw.Account, "account", pay.Account, old.Account, why)
	}
	if pay.ProviderID != old.ProviderID {
		differs(read.ColBank, row.raw.Bank, "bank", fmt.Sprintf("%s (%d)", pay.Bank, pay.ProviderID),
			fmt.Sprintf("%s (%d)", old.Bank, old.ProviderID), "")
	}
	if !pay.Amount.Equal(old.Amount) {
		differs(read.ColAmount, row.raw.Amount, "amount", pay.Amount.StringFixed(2), old.Amount.StringFixed(2), "")
	}
	return errs
}

// record records a chunk's lines and the payouts new to the ledger (ledger.Record), then, for
// each new payout that pays a retry, its link to the payout it replaces.
func (r *Runner) record(ctx context.Context, log *slog.Logger, runID string, lines []ledger.RunRow, fresh []ledger.Payout) error {
	db := r.cfg.Ledger
	if err := db.Record(ctx, runID, lines, fresh); err != nil {
		return err
	}
	refs := make([]string, len(fresh))
	for i, p := range fresh {
		refs[i] = p.Ref
	}
	retries, err := db.Retries(ctx, refs)
	if err != nil {
		return err
	}
	for _, p := range fresh {
		retry, ok := retries[p.Ref]
		if !ok {
			continue
		}
		if err := db.LinkRetry(ctx, runID, retry); err != nil {
			return err
		}
		log.Info("paying a retry of a refused payout", "ref", retry.New, "retry_of", retry.Old)
	}
	return nil
}

// addRetryFile writes the run's retry file beside its reports and lists it in res.
func (r *Runner) addRetryFile(ctx context.Context, res *Result, fileRejected bool) error {
	if res.Rejected+res.Failed+res.Unknown+res.NotSent == 0 {
		return nil // every row is paid or pending: nothing to read back for a retry file
	}
	f, err := retry.Write(ctx, r.cfg.Ledger, res.RunID, r.cfg.ReportDir, r.reportInput(res.File), fileRejected, time.Time{})
	if err != nil {
		return err
	}
	res.RetryFile = f.CSV
	res.Reports = append(res.Reports, f.List()...)
	return nil
}

// sentBySameInput reports whether the run in which the service accepted payout ref had this same
// input, although another file recorded the payout: a retry file's rows were recorded by the run
// it came from and accepted in the retry file's own run, which running it again merely resumes.
func (r *Runner) sentBySameInput(ctx context.Context, ref, path, sum string) (bool, error) {
	events, err := r.cfg.Ledger.Events(ctx, ref)
	if err != nil {
		return false, err
	}
	for _, e := range events {
		if e.To != ledger.Submitted || e.From == ledger.Submitted || e.RunID == "" {
			continue
		}
		run, err := r.cfg.Ledger.GetRun(ctx, e.RunID)
		if err != nil {
			return false, err
		}
		return run.Kind != ledger.KindReconcile && runs.SameInput(run, path, sum), nil
	}
	return false, nil
}
