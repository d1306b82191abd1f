package reconcile

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/lookup"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/pool"
	"github.com/payout/payout/ledger"
)

// MismatchNotChecked flags a payout that could not be looked up, in a reconciliation report.
const MismatchNotChecked = "not checked"

// maxThrottled 429s in a row, whatever the payouts, stop a reconciliation (see
// pool.Config.ThrottleBreaker): the service keeps throttling although its Retry-After is
// honoured, and the next reconcile, later, loses nothing.
const maxThrottled = outcome.MaxRateLimited

// request asks checker.check to look one payout up, not before at: payouts the service accepted
// go first, so that "not found" is trusted only once lookups are shown to work.
type request struct {
	ref string
	at  time.Time
}

// serviceView is what the service said of one payout that checker.check looked up, and what was
// made of it.
type serviceView struct {
	found      bool
	payout     api.Payout // what the service holds, when found
	notFound   bool
	failed     string // the last error when the service never answered
	mismatches []string
	note       string
}

// checked is what checker.check found.
type checked struct {
	views map[string]serviceView // by reference; a payout not looked up has none
	// throttled counts the payouts left not checked because every lookup of them was a 429.
	throttled int
	// stopped, when not nil, is why the lookups stopped before every payout was looked up. It
	// wraps pool.ErrThrottled when the service answered nothing but 429.
	stopped error
}

// checker looks up the payouts of one reconciliation a chunk at a time (check), so that a scope
// of any size is held a chunk at a time. What a chunk shows of the lookups themselves holds for
// the chunks after it, as within one chunk (one lookup.Session): a payout found proves that
// lookups by external_invoice_ref work, and a payout the service accepted reported not found
// means that "not found" proves nothing, so that no UNKNOWN payout of a later chunk is made READY
// on it.
type checker struct {
	cfg  batch.Config
	log  *slog.Logger
	look *lookup.Session
	// done lookups were made by the chunks checked so far, of total expected (progress only).
	done, total int

	viewsMu sync.Mutex
	views   map[string]serviceView
	// throttledRows counts the payouts left not checked because every lookup of them was a 429.
	throttledRows atomic.Int64
}

// newChecker starts the lookups of the reconciliation runID, of about total payouts in all (for
// Config.Progress only; the count may grow).
func newChecker(cfg batch.Config, log *slog.Logger, runID string, total int) *checker {
	return &checker{cfg: cfg, log: log, look: lookup.New(cfg.Lookups(log, runID)), total: total}
}

// check looks each payout of a chunk up by external_invoice_ref, through Config.Limiter and
// Config.Workers with the run's retry policy and circuit breaker, and records in the ledger, under
// the reconciliation's run, what the service holds. It never sends a payout: an UNKNOWN payout
// proven never created goes back to READY for the next run of its file; a final state of the
// ledger is never overwritten, and a service that now says otherwise is flagged. As for a run,
// the caller holds the ledger's lock. The views are the chunk's only.
func (c *checker) check(ctx context.Context, asked []request) checked {
	c.views = make(map[string]serviceView, len(asked))
	c.throttledRows.Store(0)
	tasks := make([]lookup.Task, 0, len(asked))
	for _, l := range asked {
		tasks = append(tasks, lookup.Task{Ref: l.ref, Kind: lookup.LookUp, At: l.at})
	}
	c.total = max(c.total, c.done+len(asked))
	stopped := pool.New(c.cfg.Pool(c.log, maxThrottled), c.lookUp).Run(ctx, tasks, c.done, c.total, nil)
	c.done += len(asked)
	return checked{views: c.views, throttled: int(c.throttledRows.Load()), stopped: stopped}
}

// finish shows the progress as complete: the count expected may have been more than were looked up.
func (c *checker) finish() {
	if c.cfg.Progress != nil && c.done > 0 && c.done < c.total {
		c.cfg.Progress(c.done, c.done)
	}
}

func (c *checker) record(ref string, v serviceView) {
	c.viewsMu.Lock()
	c.views[ref] = v
	c.viewsMu.Unlock()
}

// lookUp is the reconciliation's lookup task: the run's lookup, but able to compare final rows
// and to flag what differs. It never sends. A row that moved under it (a callback applied by
// `payout callbacks`, which does not take the run lock) is read and looked up again, a bounded
// number of times, rather than stopping the reconciliation.
func (c *checker) lookUp(ctx context.Context, t lookup.Task) lookup.Result {
	o := c.lookUpOnce(ctx, t)
	if o.Fatal != nil && errors.Is(o.Fatal, ledger.ErrStateConflict) && t.Attempt+1 < c.cfg.MaxLookupErrors {
		c.log.Info("payout changed during its lookup; looking it up again", "ref", t.Ref)
		return lookup.Result{Task: t, ServiceOK: true, Next: &lookup.Task{Ref: t.Ref, Kind: lookup.LookUp, At: c.cfg.Now(), Attempt: t.Attempt + 1}}
	}
	return c.look.SettledByCallback(o)
}

func (c *checker) lookUpOnce(ctx context.Context, t lookup.Task) lookup.Result {
	if t.Kind != lookup.LookUp {
		c.log.Error("reconcile refused to send a payout", "ref", t.Ref)
		return lookup.Result{Task: t, RowDone: true}
	}
	return c.look.Row(ctx, t, true, lookup.Steps{
		Found: func(p ledger.Payout, got api.Payout) lookup.Result { return c.found(ctx, t, p, got) },
		Missing: func(p ledger.Payout, now time.Time) lookup.Result {
			return c.missing(ctx, t, p, now)
		},
		GaveUp: func(limited bool, msg string) {
			if limited {
				c.throttledRows.Add(1)
				msg = "the service is throttling lookups (HTTP 429)"
			}
			c.record(t.Ref, serviceView{failed: msg, mismatches: []string{MismatchNotChecked}})
		},
	})
}

// found records what the service holds for a payout, as outcome.ReconcileFound decides.
func (c *checker) found(ctx context.Context, t lookup.Task, p ledger.Payout, got api.Payout) lookup.Result {
	changes, v := outcome.ReconcileFound(p, got)
	if o := c.look.Apply(ctx, t, changes...); o != nil {
		return *o
	}
	c.record(t.Ref, serviceView{found: true, payout: got, mismatches: v.Mismatches, note: v.Note})
	return lookup.Result{Task: t, ServiceOK: true, RowDone: true}
}

// missing handles "not found". For an UNKNOWN row it is the run's decision (look again after a
// spacing, or declare it never created once the grace has passed and lookups are proven to work;
// never sent from here); for any other, outcome.ReconcileMissing's.
func (c *checker) missing(ctx context.Context, t lookup.Task, p ledger.Payout, now time.Time) lookup.Result {
	if p.State == ledger.Unknown {
		c.record(t.Ref, serviceView{notFound: true})
		return c.look.NotFound(ctx, t, p, now, false)
	}
	changes, v, broken := outcome.ReconcileMissing(p, func() bool { return c.look.RefusalNotFoundTrusted(ctx) })
	if broken {
		c.look.MarkBroken()
	}
	if o := c.look.Apply(ctx, t, changes...); o != nil {
		return *o
	}
	c.record(t.Ref, serviceView{notFound: true, mismatches: v.Mismatches, note: v.Note})
	return lookup.Result{Task: t, ServiceOK: true, RowDone: true}
}
