package reconcile_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/reconcile"
	"github.com/payout/payout/ledger"
)

// TestReconcileDoesNotConfirmARefusalWhenLookupsMissKnownPayouts: on a service whose lookups by
// external_invoice_ref find nothing, not even a payout it accepted, "not found" does not confirm
// that a refused create created nothing, even when the refused row is looked up before the
// accepted one has answered.
func TestReconcileDoesNotConfirmARefusalWhenLookupsMissKnownPayouts(t *testing.T) {
	t.Parallel()
	b := newReconBench(t, sandbox.Faults{})
	b.record("A-REFUSED", "6670001", "10.00", ledger.Submitting, ledger.Unknown, ledger.Failed)
	if _, err := b.create("B-ACCEPTED", "6670002", "20.00"); err != nil {
		t.Fatal(err)
	}
	b.record("B-ACCEPTED", "6670002", "20.00", ledger.Submitting, ledger.Submitted)
	// A lookup of B-ACCEPTED asked before A-REFUSED's answers only once A-REFUSED is decided.
	released := make(chan struct{})
	var release sync.Once
	var askedA atomic.Bool
	blind := &batchtest.HookedService{Client: b.client, BeforeGet: func(ref string) error {
		if ref == "A-REFUSED" {
			askedA.Store(true)
		}
		if ref == "B-ACCEPTED" && !askedA.Load() {
			select {
			case <-released:
			case <-time.After(5 * time.Second):
				t.Error("A-REFUSED was never decided")
			}
		}
		return &api.Error{Op: "get payout", Kind: api.KindNotFound, HTTPStatus: 404}
	}}
	res, err := reconcile.Run(context.Background(), b.runner(func(c *batch.Config) {
		c.Service, c.Workers = blind, 2
		c.Progress = func(done, total int) { release.Do(func() { close(released) }) }
	}).Config(), reconcile.Options{FailedWithin: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	refused := b.state("A-REFUSED")
	if outcome.FailureConfirmed(refused) {
		t.Errorf("A-REFUSED %+v: refusal confirmed by a lookup that does not find B-ACCEPTED either (reconcile %+v)", refused, res)
	}
}
