package reconcile

import (
	"context"
	"time"

	"github.com/payout/payout/batch"
	"github.com/payout/payout/ledger"
)

// writeRetryFiles writes again, into dir, the retry file of every run whose unpaid rows may
// have changed: the runs listing a payout this reconciliation moved, and those listing a payout
// refused with nothing created that no retry file has offered yet (made FAILED by a callback,
// say). Each is named `<input>.<run id>.reconciled-<now>.retry.csv`, so the newest retry file of a
// run holds every row of it still unpaid; a run with none left gets none, and its older retry
// files would pay nothing that is paid. It returns the files written.
func writeRetryFiles(ctx context.Context, db *ledger.DB, dir string, before, after map[string]ledger.Payout, now time.Time) ([]string, error) {
	var refs []string
	for ref, p := range after {
		if was, ok := before[ref]; ok && was.State != p.State {
			refs = append(refs, ref)
		}
	}
	offered, err := refusedNotOffered(ctx, db)
	if err != nil {
		return nil, err
	}
	runs, err := db.RunsListing(ctx, append(refs, offered...))
	if err != nil {
		return nil, err
	}
	var written []string
	for _, id := range runs {
		run, err := db.GetRun(ctx, id)
		if err != nil {
			return written, err
		}
		f, err := batch.WriteRetryFile(ctx, db, id, dir, "", run.ExitCode == batch.ExitRejected, now)
		if err != nil {
			return written, err
		}
		written = append(written, f.List()...)
	}
	return written, nil
}

// refusedNotOffered lists the FAILED payouts known to have created nothing that have no retry.
func refusedNotOffered(ctx context.Context, db *ledger.DB) ([]string, error) {
	failed, err := db.List(ctx, ledger.Filter{States: []ledger.State{ledger.Failed}})
	if err != nil {
		return nil, err
	}
	var refs []string
	for _, p := range failed {
		if !batch.FailureConfirmed(p.InvoiceNo, p.LastError) {
			continue
		}
		if _, ok, err := db.RetryFor(ctx, p.Ref); err != nil {
			return nil, err
		} else if !ok {
			refs = append(refs, p.Ref)
		}
	}
	return refs, nil
}
