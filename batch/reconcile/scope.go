package reconcile

import (
	"context"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/words"
	"github.com/payout/payout/ledger"
)

// reconEntry is one row of a reconciliation: an input row of a file, or a payout.
type reconEntry struct {
	runID      string
	line       int
	ref        string
	recipient  string
	account    string
	amount     decimal.Decimal
	amountText string // the file's amount when it is no number (amount is zero then)
	rejected   bool   // a rejected input row: there is no payout
	reason     string // why it was rejected
	unrecorded bool   // a valid row of a file rejected as a whole: never recorded as a payout
	recheck    bool   // a recent refusal (FailedWithin), FAILED already: looked up in case the service holds it
}

func entryRefs(entries []reconEntry) []string {
	refs := make([]string, 0, len(entries))
	for _, e := range entries {
		if !e.rejected {
			refs = append(refs, e.ref)
		}
	}
	return refs
}

func payoutEntry(p ledger.Payout) reconEntry {
	return reconEntry{runID: p.RunID, line: p.Line, ref: p.Ref, recipient: p.Recipient, account: p.Account, amount: p.Amount}
}

// walk calls emit with each row of a reconciliation's scope, in report order. It reads the
// ledger a page at a time and holds no page while emit runs, so that emit may write to it.
type walk func(ctx context.Context, emit func(reconEntry) error) error

// notFinal is the payouts a reconciliation of no run and no date covers.
var notFinal = []ledger.State{ledger.Submitted, ledger.Unknown, ledger.Submitting, ledger.Ready}

// scope describes a reconciliation's scope and returns how to walk its rows, and about how many
// payouts it looks up (for progress only).
func (rc *reconciler) scope(ctx context.Context, opts Options, run ledger.Run) (string, walk, int, error) {
	db, page := rc.cfg.Ledger, rc.cfg.ChunkRows
	switch {
	case opts.RunID != "":
		scope := "run " + run.ID
		if run.File != "" {
			scope += " (" + run.File + ")"
		}
		return scope, func(ctx context.Context, emit func(reconEntry) error) error {
			return runLines(ctx, db, run.ID, page, nil, emit)
		}, run.Rows, nil
	case !opts.Since.IsZero():
		runs, err := db.FindRuns(ctx, ledger.RunFilter{Since: opts.Since})
		if err != nil {
			return "", nil, 0, err
		}
		expected := 0
		for _, r := range runs {
			expected += r.Rows
		}
		return "since " + words.FormatTime(opts.Since, rc.cfg.Zone), func(ctx context.Context, emit func(reconEntry) error) error {
			return sinceRows(ctx, db, page, runs, opts.Since, emit)
		}, expected, nil
	}
	totals, err := db.Counts(ctx, ledger.CountRead{})
	if err != nil {
		return "", nil, 0, err
	}
	counts := totals.States
	expected := counts[ledger.Submitted].Count + counts[ledger.Unknown].Count + counts[ledger.Submitting].Count
	scope := "every payout not yet final"
	var refusedSince time.Time
	if opts.FailedWithin > 0 {
		scope = fmt.Sprintf("every payout not yet final, and those refused in the last %s", days(opts.FailedWithin))
		refusedSince = rc.cfg.Now().Add(-opts.FailedWithin)
	}
	return scope, func(ctx context.Context, emit func(reconEntry) error) error {
		err := db.WalkPayouts(ctx, ledger.Filter{States: notFinal}, page, func(p ledger.Payout) error {
			return emit(payoutEntry(p))
		})
		if err != nil || refusedSince.IsZero() {
			return err
		}
		// The FAILED rows the service never held as payouts (no invoice number: their create was
		// refused) that failed within the last while.
		return db.WalkPayouts(ctx, ledger.Filter{RefusedSince: refusedSince}, page, func(p ledger.Payout) error {
			e := payoutEntry(p)
			e.recheck = true
			return emit(e)
		})
	}, expected, nil
}

// sinceRows walks the rows of the files run since a date, each payout once, then the payouts
// recorded since the date by a run that began before it. The references of the payouts walked
// are held to leave out a payout that a rerun of its file lists again: a scope of files held a
// reference each, not its rows.
func sinceRows(ctx context.Context, db ledger.ReconcileStore, page int, runs []ledger.Run, since time.Time, emit func(reconEntry) error) error {
	seen := make(map[string]struct{})
	for _, run := range runs {
		if run.Kind == ledger.KindReconcile || run.Kind == ledger.KindDryRun {
			continue
		}
		if err := runLines(ctx, db, run.ID, page, seen, emit); err != nil {
			return err
		}
	}
	return db.WalkPayouts(ctx, ledger.Filter{CreatedSince: since}, page, func(p ledger.Payout) error {
		if _, ok := seen[p.Ref]; ok {
			return nil
		}
		seen[p.Ref] = struct{}{}
		return emit(payoutEntry(p))
	})
}

func days(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		if n := int(d / (24 * time.Hour)); n != 1 {
			return fmt.Sprintf("%d days", n)
		}
		return "day"
	}
	return d.String()
}

// runLines walks a run's input rows, a range of lines at a time. A payout seen already (a rerun
// of the same file) is left out when seen is not nil, so that no payout counts twice.
func runLines(ctx context.Context, db ledger.ReconcileStore, runID string, page int, seen map[string]struct{}, emit func(reconEntry) error) error {
	return db.RunLines(ctx, runID, ledger.LineRead{Page: page}, func(l ledger.ReportLine) error {
		e, ok := lineEntry(runID, l, seen)
		if !ok {
			return nil
		}
		return emit(e)
	})
}

// lineEntry is the row of a run's line, and false for a payout seen already.
func lineEntry(runID string, l ledger.ReportLine, seen map[string]struct{}) (reconEntry, bool) {
	rr := l.Row
	e := reconEntry{runID: runID, line: rr.Line, ref: rr.Ref, recipient: rr.Recipient, account: rr.Account,
		rejected: rr.Rejected, reason: rr.Reason}
	if amount, ok := ledger.AmountAsWritten(rr.Amount); ok {
		e.amount = amount
	} else {
		e.amountText = rr.Amount
	}
	if !rr.Rejected {
		if l.Payout == nil {
			e.unrecorded = true
		} else if seen != nil {
			if _, ok := seen[rr.Ref]; ok {
				return e, false
			}
			seen[rr.Ref] = struct{}{}
		}
	}
	return e, true
}

// lookupsOf is a lookup per payout that can have changed at the service. Payouts the service
// accepted are looked up first: if one of them is "not found", lookups prove nothing and no
// UNKNOWN row is declared never created.
func lookupsOf(entries []reconEntry, current map[string]ledger.Payout, scoped bool, now time.Time) ([]request, map[string]bool) {
	var out []request
	lookups := make(map[string]bool)
	for _, e := range entries {
		p, ok := current[e.ref]
		if e.rejected || e.unrecorded || !ok || lookups[e.ref] {
			continue
		}
		at := now
		switch p.State {
		case ledger.Unknown:
		case ledger.Submitted:
			at = now.Add(-time.Second)
		case ledger.Succeeded, ledger.Failed:
			// Unscoped, the only final rows listed are recent refusals: they are looked up.
			if !scoped && !outcome.RefusedCreate(p) {
				continue
			}
			at = now.Add(-time.Second)
		default:
			// READY was never sent (or was proven never created): nothing to look up.
			continue
		}
		lookups[e.ref] = true
		out = append(out, request{ref: e.ref, at: at})
	}
	return out, lookups
}
