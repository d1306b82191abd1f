package batch

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/ledger"
)

// MismatchNotChecked flags a payout that could not be looked up, in a reconciliation report.
const MismatchNotChecked = "not checked"

// Lookup asks Checker.Check to look one payout up, not before At: payouts the service accepted go
// first, so that "not found" is trusted only once lookups are shown to work.
type Lookup struct {
	Ref string
	At  time.Time
}

// ServiceView is what the service said of one payout that Checker.Check looked up, and what was
// made of it.
type ServiceView struct {
	Found      bool
	Payout     api.Payout // what the service holds, when Found
	NotFound   bool
	Failed     string // the last error when the service never answered
	Mismatches []string
	Note       string
}

// Checked is what Checker.Check found.
type Checked struct {
	Views map[string]ServiceView // by reference; a payout not looked up has none
	// Throttled counts the payouts left not checked because every lookup of them was a 429.
	Throttled int
	// Stopped, when not nil, is why the lookups stopped before every payout was looked up. It
	// wraps pool.ErrThrottled when the service answered nothing but 429.
	Stopped error
}

// RefusedCreate reports a FAILED payout whose create the service refused: it never gave an
// invoice number.
func RefusedCreate(p ledger.Payout) bool {
	return outcome.RefusedCreate(p)
}

// reconciliation is the state of one Checker, shared by its workers.
type reconciliation struct {
	*lookups
	viewsMu sync.Mutex
	views   map[string]ServiceView
	// throttledRows counts the payouts left not checked because every lookup of them was a 429.
	throttledRows atomic.Int64
}

func (rc *reconciliation) record(ref string, v ServiceView) {
	rc.viewsMu.Lock()
	rc.views[ref] = v
	rc.viewsMu.Unlock()
}

// check is the reconciliation's lookup task: the submission's lookup, but able to compare final
// rows and to flag what differs. It never sends. A row that moved under it (a callback applied by
// `payout callbacks`, which does not take the run lock) is read and looked up again, a bounded
// number of times, rather than stopping the reconciliation.
func (rc *reconciliation) check(ctx context.Context, t task) taskResult {
	o := rc.checkOnce(ctx, t)
	if o.Fatal != nil && errors.Is(o.Fatal, ledger.ErrStateConflict) && t.attempt+1 < rc.r.cfg.MaxLookupErrors {
		rc.log.Info("payout changed during its lookup; looking it up again", "ref", t.ref)
		return taskResult{Task: t, ServiceOK: true, Next: &task{ref: t.ref, kind: taskLookup, at: rc.r.cfg.Now(), attempt: t.attempt + 1}}
	}
	return rc.settledByCallback(o)
}

func (rc *reconciliation) checkOnce(ctx context.Context, t task) taskResult {
	if t.kind != taskLookup {
		rc.log.Error("reconcile refused to send a payout", "ref", t.ref)
		return taskResult{Task: t, RowDone: true}
	}
	return rc.lookUpRow(ctx, t, true, lookupSteps{
		found: func(p ledger.Payout, got api.Payout) taskResult { return rc.found(ctx, t, p, got) },
		missing: func(p ledger.Payout, now time.Time) taskResult {
			return rc.missing(ctx, t, p, now)
		},
		gaveUp: func(limited bool, msg string) {
			if limited {
				rc.throttledRows.Add(1)
				msg = "the service is throttling lookups (HTTP 429)"
			}
			rc.record(t.ref, ServiceView{Failed: msg, Mismatches: []string{MismatchNotChecked}})
		},
	})
}

// found records what the service holds for a payout, as outcome.ReconcileFound decides.
func (rc *reconciliation) found(ctx context.Context, t task, p ledger.Payout, got api.Payout) taskResult {
	changes, v := outcome.ReconcileFound(p, got)
	if o := rc.apply(ctx, t, changes...); o != nil {
		return *o
	}
	rc.record(t.ref, ServiceView{Found: true, Payout: got, Mismatches: v.Mismatches, Note: v.Note})
	return taskResult{Task: t, ServiceOK: true, RowDone: true}
}

// missing handles "not found". For an UNKNOWN row it is the run's decision (look again after a
// spacing, or declare it never created once the grace has passed and lookups are proven to work);
// for any other, outcome.ReconcileMissing's.
func (rc *reconciliation) missing(ctx context.Context, t task, p ledger.Payout, now time.Time) taskResult {
	if p.State == ledger.Unknown {
		rc.record(t.ref, ServiceView{NotFound: true})
		return rc.notFound(ctx, t, p, now, false)
	}
	changes, v, broken := outcome.ReconcileMissing(p, func() bool { return rc.refusalNotFoundTrusted(ctx) })
	if broken {
		rc.broken.Store(true)
	}
	if o := rc.apply(ctx, t, changes...); o != nil {
		return *o
	}
	rc.record(t.ref, ServiceView{NotFound: true, Mismatches: v.Mismatches, Note: v.Note})
	return taskResult{Task: t, ServiceOK: true, RowDone: true}
}
