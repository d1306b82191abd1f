package reconcile

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/retry"
	"github.com/payout/payout/ledger"
)

// retryStore is what writing the retry files of the runs a reconciliation changed reads and
// records.
type retryStore interface {
	ledger.ReconcileStore
	retry.Ledger
}

// writeRetryFiles writes again, into dir, the retry file of every run whose unpaid rows may
// have changed: the runs listing a payout this reconciliation moved (runs), and those listing a
// payout refused with nothing created that no retry file has offered yet (made FAILED by a
// callback, say). Each is named `<input>.<run id>.reconciled-<now>.retry.csv`, so the newest retry
// file of a run holds every row of it still unpaid; a run with none left gets none, and its older
// retry files would pay nothing that is paid. Runs are written oldest first. It returns the files
// written.
func writeRetryFiles(ctx context.Context, db retryStore, dir string, runs map[string]bool, page int, now time.Time) ([]string, error) {
	if err := refusedNotOffered(ctx, db, page, runs); err != nil {
		return nil, err
	}
	listed := make([]ledger.Run, 0, len(runs))
	for id := range runs {
		run, err := db.GetRun(ctx, id)
		if err != nil {
			return nil, err
		}
		listed = append(listed, run)
	}
	slices.SortFunc(listed, func(a, b ledger.Run) int {
		return cmp.Or(a.StartedAt.Compare(b.StartedAt), cmp.Compare(a.ID, b.ID))
	})
	var written []string
	for _, run := range listed {
		f, err := retry.Write(ctx, db, run.ID, dir, "", run.ExitCode == exitcode.Rejected, now, now)
		if err != nil {
			return written, err
		}
		written = append(written, f.List()...)
	}
	return written, nil
}

// refusedNotOffered adds to runs those listing a FAILED payout known to have created nothing
// that has no retry, reading the FAILED payouts a page at a time.
func refusedNotOffered(ctx context.Context, db ledger.ReconcileStore, page int, runs map[string]bool) error {
	var refs []string
	list := func() error {
		if len(refs) == 0 {
			return nil
		}
		found, err := db.FindRuns(ctx, ledger.RunFilter{Listing: refs})
		for _, r := range found {
			runs[r.ID] = true
		}
		refs = refs[:0]
		return err
	}
	err := db.WalkPayouts(ctx, ledger.Filter{States: []ledger.State{ledger.Failed}}, page, func(p ledger.Payout) error {
		if !outcome.FailureConfirmed(p) {
			return nil
		}
		if retries, err := db.Retries(ctx, ledger.RetryFilter{Old: []string{p.Ref}}); err != nil || len(retries) > 0 {
			return err
		}
		refs = append(refs, p.Ref)
		if len(refs) < page {
			return nil
		}
		return list()
	})
	if err != nil {
		return err
	}
	if len(refs) == 0 {
		return nil
	}
	return list()
}
