package batch

import (
	"context"
	"log/slog"
)

// Checker looks up the payouts of one reconciliation a chunk at a time (Check), so that a scope
// of any size is held a chunk at a time. What a chunk shows of the lookups themselves holds for
// the chunks after it, as within one chunk: a payout found proves that lookups by
// external_invoice_ref work, and a payout the service accepted reported not found means that "not
// found" proves nothing, so that no UNKNOWN payout of a later chunk is made READY on it.
type Checker struct {
	r  *Runner
	rc *reconciliation
	// done lookups were made by the chunks checked so far, of total expected (progress only).
	done, total int
}

// NewChecker starts the lookups of the reconciliation runID, of about total payouts in all (for
// Config.Progress only; the count may grow).
func (r *Runner) NewChecker(log *slog.Logger, runID string, total int) *Checker {
	return &Checker{r: r, rc: &reconciliation{lookups: &lookups{r: r, log: log, runID: runID}}, total: total}
}

// Check looks each payout of a chunk up by external_invoice_ref, through Config.Limiter and
// Config.Workers with the run's retry policy and circuit breaker, and records in the ledger, under
// the reconciliation's run, what the service holds. It never sends a payout: an UNKNOWN payout
// proven never created goes back to READY for the next run of its file; a final state of the
// ledger is never overwritten, and a service that now says otherwise is flagged. As for a run,
// the caller holds the ledger's lock. The Views are the chunk's only.
func (c *Checker) Check(ctx context.Context, asked []Lookup) Checked {
	c.rc.views = make(map[string]ServiceView, len(asked))
	c.rc.throttledRows.Store(0)
	tasks := make([]task, 0, len(asked))
	for _, l := range asked {
		tasks = append(tasks, task{ref: l.Ref, kind: taskLookup, at: l.At})
	}
	c.total = max(c.total, c.done+len(asked))
	stopped := c.r.newPool(c.rc.log, c.rc.check, maxThrottled).Run(ctx, tasks, c.done, c.total, nil)
	c.done += len(asked)
	return Checked{Views: c.rc.views, Throttled: int(c.rc.throttledRows.Load()), Stopped: stopped}
}

// Finish shows the progress as complete: the count expected may have been more than were looked up.
func (c *Checker) Finish() {
	if c.r.cfg.Progress != nil && c.done > 0 && c.done < c.total {
		c.r.cfg.Progress(c.done, c.done)
	}
}
