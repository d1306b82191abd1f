package reconcile

import (
	"context"
	"log/slog"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/batch/runs"
	"github.com/payout/payout/ledger"
)

// chunks is one reconciliation's pass over its scope, a chunk at a time, and what it adds up to.
// It holds one chunk's rows, their payouts and lookups, and the runs whose unpaid rows changed.
type chunks struct {
	rc      *reconciler
	log     *slog.Logger
	checker *checker
	scoped  bool // a run or a date: final payouts are looked up too

	// stopped is why the lookups stopped, if they did: the chunks after it are not looked up.
	stopped   error
	throttled int // payouts not checked because every lookup of them was a 429
	refused   int // re-checked refusals still FAILED
	err       error

	payouts, lookedUp, changed, toResend, mismatches, notChecked, nameMismatches int
	counts                                                                       runs.StateCounts
	total                                                                        decimal.Decimal
	// runs lists the runs whose retry file is written again: they list a payout this
	// reconciliation moved.
	runs map[string]bool
}

// walk settles the rows of the scope a chunk at a time and hands each chunk's report rows to add.
func (c *chunks) walk(ctx context.Context, rows walk, add func(report.ReconRow)) error {
	size := c.rc.cfg.ChunkRows
	chunk := make([]reconEntry, 0, size)
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		settled, err := c.settle(ctx, chunk)
		if err != nil {
			return err
		}
		for _, r := range settled {
			add(r)
		}
		chunk = chunk[:0]
		return nil
	}
	err := rows(context.WithoutCancel(ctx), func(e reconEntry) error {
		chunk = append(chunk, e)
		if len(chunk) < size {
			return nil
		}
		return flush()
	})
	if err != nil {
		return err
	}
	return flush()
}

// settle looks a chunk's payouts up, unless the lookups stopped, and returns its report rows.
func (c *chunks) settle(ctx context.Context, entries []reconEntry) ([]report.ReconRow, error) {
	bg := context.WithoutCancel(ctx)
	db := c.rc.cfg.Ledger
	before, err := db.Lookup(bg, entryRefs(entries), ledger.WholePayouts)
	if err != nil {
		return nil, err
	}
	lookups, looked := lookupsOf(entries, before, c.scoped, c.rc.cfg.Now())
	c.lookedUp += len(lookups)
	checked := checked{stopped: c.stopped}
	if c.stopped == nil && len(lookups) > 0 {
		checked = c.checker.check(ctx, lookups)
		c.stopped, c.throttled = checked.stopped, c.throttled+checked.throttled
	}
	after, err := db.Lookup(bg, entryRefs(entries), ledger.WholePayouts)
	if err != nil {
		return nil, err
	}
	rows := reportRows(entries, before, after, looked, checked)
	names, err := addNameChecks(bg, db, rows)
	if err != nil {
		return nil, err
	}
	c.nameMismatches += names
	c.add(rows)
	var moved []string
	for ref, p := range after {
		if was, ok := before[ref]; ok && was.State != p.State {
			moved = append(moved, ref)
			c.changed++
			if was.State == ledger.Unknown && p.State == ledger.Ready {
				c.toResend++
			}
		}
	}
	for _, e := range entries {
		if e.recheck && after[e.ref].State == ledger.Failed {
			c.refused++
		}
	}
	return rows, c.listRuns(bg, moved)
}

// add counts report rows by ledger state.
func (c *chunks) add(rows []report.ReconRow) {
	c.payouts += len(rows)
	for _, row := range rows {
		c.total = c.total.Add(row.LedgerAmount)
		c.counts.Add(ledger.State(row.LedgerState))
		if len(row.Mismatches) > 0 {
			c.mismatches++
		}
		for _, m := range row.Mismatches {
			if m == MismatchNotChecked {
				c.notChecked++
			}
		}
	}
}

// listRuns adds the runs that list one of refs to those whose retry file is written again.
func (c *chunks) listRuns(ctx context.Context, refs []string) error {
	if len(refs) == 0 {
		return nil
	}
	runs, err := c.rc.cfg.Ledger.FindRuns(ctx, ledger.RunFilter{Listing: refs})
	for _, r := range runs {
		c.runs[r.ID] = true
	}
	return err
}

// result is res with what the pass added up to.
func (c *chunks) result(res Result) Result {
	res.Payouts, res.LookedUp, res.Changed, res.ToResend = c.payouts, c.lookedUp, c.changed, c.toResend
	res.Mismatches, res.NotChecked, res.NameMismatches = c.mismatches, c.notChecked, c.nameMismatches
	res.TotalAmount = c.total
	res.Rejected, res.Succeeded, res.Pending = c.counts.Rejected, c.counts.Succeeded, c.counts.Pending
	res.Failed, res.Unknown, res.NotSent = c.counts.Failed, c.counts.Unknown, c.counts.NotSent
	return res
}
