package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch/reconcile"
	"github.com/payout/payout/ledger"
)

// TestReconcileOfNothingNewAddsNoEvents: once a reconciliation has recorded what it found, the
// next ones, finding the same, add nothing to any payout's trail (only their own run records):
// a reconcile every hour must not grow the ledger by its payouts.
func TestReconcileOfNothingNewAddsNoEvents(t *testing.T) {
	t.Parallel()
	b := newReconBench(t, sandbox.Faults{})
	paid := b.pay("paid.csv", [][3]string{{"G-1", "7770001", "10.00"}, {"G-2", "7770002", "20.00"}}, nil)
	b.settle()
	b.record("G-REFUSED", "7770003", "30.00", ledger.Submitting, ledger.Unknown, ledger.Failed)
	b.record("G-REFUSED-2", "7770004", "40.00", ledger.Submitting, ledger.Unknown, ledger.Failed)
	opts := reconcile.Options{FailedWithin: 7 * 24 * time.Hour}
	b.reconcile(opts) // records the settlements and confirms the refusals
	refs := []string{"G-1", "G-2", "G-REFUSED", "G-REFUSED-2"}
	before := b.eventCounts(refs)
	for _, o := range []reconcile.Options{opts, opts, {RunID: paid.RunID}, {RunID: paid.RunID}, {Since: time.Now().Add(-time.Hour)}} {
		if res := b.reconcile(o); res.Changed != 0 {
			t.Fatalf("a reconcile of nothing new changed %d payouts: %+v", res.Changed, res)
		}
	}
	after := b.eventCounts(refs)
	for _, ref := range refs {
		if after[ref] != before[ref] {
			t.Errorf("%s: %d events after more reconciles, %d before", ref, after[ref], before[ref])
		}
	}
}

func (b *reconBench) eventCounts(refs []string) map[string]int {
	b.tb.Helper()
	out := make(map[string]int)
	for _, ref := range refs {
		evs, err := b.db.Events(context.Background(), ref)
		if err != nil {
			b.tb.Fatal(err)
		}
		out[ref] = len(evs)
	}
	return out
}
