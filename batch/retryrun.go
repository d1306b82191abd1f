package batch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/ledger"
)

// ErrRetryOfPaid rejects a row paying a retry (a reference a retry file derived for a payout the
// service refused) when the ledger no longer holds that payout as refused: a reconciliation found
// it at the service after all, and paying the retry would pay twice.
var ErrRetryOfPaid = errors.New("a retry of a payout the service holds after all")

// checkRetries rejects the chunk's valid rows new to the ledger that would pay a retry of a
// payout no longer FAILED.
func checkRetries(ctx context.Context, db *ledger.DB, rows []fileRow, existing map[string]ledger.Payout) error {
	var refs []string
	for i := range rows {
		if _, recorded := existing[rows[i].payment.Ref]; rows[i].valid() && !recorded && mayBeRetryRef(rows[i].payment.Ref) {
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
		if old.State == ledger.Failed {
			continue
		}
		row.errs = append(row.errs, &read.RowError{Line: row.raw.Line, Column: read.ColRef, Value: row.payment.Ref,
			Err: fmt.Errorf("%w: it replaces %s, which the ledger now holds as %s; delete this row", ErrRetryOfPaid, old.Ref, old.State)})
	}
	return nil
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
	f, err := WriteRetryFile(ctx, r.cfg.Ledger, res.RunID, r.cfg.ReportDir, r.reportInput(res.File), fileRejected, time.Time{})
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
		return run.Kind != "reconcile" && sameInput(run, path, sum), nil
	}
	return false, nil
}
