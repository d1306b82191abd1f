package reconcile

import (
	"context"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/batch"
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

// scope lists the rows a reconciliation reports, in report order.
func (rc *reconciler) scope(ctx context.Context, opts Options, run ledger.Run) (string, []reconEntry, error) {
	db := rc.cfg.Ledger
	switch {
	case opts.RunID != "":
		entries, _, err := runEntries(ctx, db, run.ID, nil)
		if err != nil {
			return "", nil, err
		}
		scope := "run " + run.ID
		if run.File != "" {
			scope += " (" + run.File + ")"
		}
		return scope, entries, nil
	case !opts.Since.IsZero():
		runs, err := db.RunsSince(ctx, opts.Since)
		if err != nil {
			return "", nil, err
		}
		var entries []reconEntry
		seen := make(map[string]bool)
		for _, run := range runs {
			if run.Kind == "reconcile" || run.Kind == "dry-run" {
				continue
			}
			more, _, err := runEntries(ctx, db, run.ID, seen)
			if err != nil {
				return "", nil, err
			}
			entries = append(entries, more...)
		}
		// Payouts recorded since the date by a run that began before it.
		payouts, err := db.List(ctx, ledger.Filter{Since: opts.Since})
		if err != nil {
			return "", nil, err
		}
		for _, p := range payouts {
			if !seen[p.Ref] {
				seen[p.Ref] = true
				entries = append(entries, payoutEntry(p))
			}
		}
		return "since " + opts.Since.Format(time.RFC3339), entries, nil
	}
	payouts, err := db.List(ctx, ledger.Filter{States: []ledger.State{ledger.Submitted, ledger.Unknown, ledger.Submitting, ledger.Ready}})
	if err != nil {
		return "", nil, err
	}
	entries := make([]reconEntry, 0, len(payouts))
	for _, p := range payouts {
		entries = append(entries, payoutEntry(p))
	}
	if opts.FailedWithin <= 0 {
		return "every payout not yet final", entries, nil
	}
	refused, err := rc.recentRefusals(ctx, opts.FailedWithin)
	if err != nil {
		return "", nil, err
	}
	for _, p := range refused {
		e := payoutEntry(p)
		e.recheck = true
		entries = append(entries, e)
	}
	return fmt.Sprintf("every payout not yet final, and those refused in the last %s", days(opts.FailedWithin)), entries, nil
}

// recentRefusals is the FAILED rows the service never held as payouts (no invoice number: their
// create was refused) that failed within the last while.
func (rc *reconciler) recentRefusals(ctx context.Context, within time.Duration) ([]ledger.Payout, error) {
	return rc.cfg.Ledger.RefusedSince(ctx, rc.cfg.Now().Add(-within))
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

// runEntries is a run's input rows. A payout seen already (a rerun of the same file) is left out
// when seen is not nil, so that no payout counts twice.
func runEntries(ctx context.Context, db *ledger.DB, runID string, seen map[string]bool) ([]reconEntry, map[string]bool, error) {
	lines, err := db.RunReport(ctx, runID)
	if err != nil {
		return nil, nil, err
	}
	entries := make([]reconEntry, 0, len(lines))
	for _, l := range lines {
		rr := l.Row
		e := reconEntry{runID: runID, line: rr.Line, ref: rr.Ref, recipient: rr.Recipient, account: rr.Account,
			rejected: rr.Rejected, reason: rr.Reason}
		if amount, err := decimal.NewFromString(rr.Amount); err == nil {
			e.amount = amount
		}
		if !rr.Rejected {
			if l.Payout == nil {
				e.unrecorded = true
			} else if seen != nil {
				if seen[rr.Ref] {
					continue
				}
				seen[rr.Ref] = true
			}
		}
		entries = append(entries, e)
	}
	return entries, seen, nil
}

// lookupsOf is a lookup per payout that can have changed at the service. Payouts the service
// accepted are looked up first: if one of them is "not found", lookups prove nothing and no
// UNKNOWN row is declared never created.
func lookupsOf(entries []reconEntry, current map[string]ledger.Payout, scoped bool, now time.Time) ([]batch.Lookup, map[string]bool) {
	var out []batch.Lookup
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
			if !scoped && !batch.RefusedCreate(p) {
				continue
			}
			at = now.Add(-time.Second)
		default:
			// READY was never sent (or was proven never created): nothing to look up.
			continue
		}
		lookups[e.ref] = true
		out = append(out, batch.Lookup{Ref: e.ref, At: at})
	}
	return out, lookups
}
