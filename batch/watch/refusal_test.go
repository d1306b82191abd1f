package watch_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/batch/runid"
	"github.com/payout/payout/batch/watch"
	"github.com/payout/payout/ledger"
)

// TestWatchAdvisesNewReferencesOnlyForConfirmedRefusals: folder mode's note advises paying FAILED
// rows again under new references only when no FAILED row of the file may exist at the service.
func TestWatchAdvisesNewReferencesOnlyForConfirmedRefusals(t *testing.T) {
	t.Parallel()
	const advice = "new external_invoice_ref values"
	t.Run("a refusal the lookup confirmed", func(t *testing.T) {
		// The sandbox refuses amounts over 1000.00 and creates nothing: the lookup finds nothing.
		rig := newWatchRig(t, batchtest.NewHarness(t, sandbox.Options{MaxAmount: decimal.RequireFromString("1000.00")}), 0, nil)
		watchPut(t, rig.path(watch.InboxDir, "over.csv"), watchCSV(batchtest.Payroll(2, "OVER")))
		if worst, err := rig.w.Once(context.Background()); err != nil || worst != exitcode.Attention {
			t.Fatalf("once: exit %d, %v; want 4; logs:\n%s", worst, err, rig.logs)
		}
		why := batchtest.ReadFile(t, rig.path(watch.FailedDir, "over.csv"+watch.WhySuffix))
		if !strings.Contains(why, advice) {
			t.Errorf("note lacks the advice for a confirmed refusal:\n%s", why)
		}
	})
	t.Run("a refusal no lookup confirmed", func(t *testing.T) {
		h := batchtest.NewHarness(t, sandbox.Options{})
		rig := newWatchRig(t, h, 0, nil)
		rows := batchtest.Payroll(2, "OLD")
		// The ledger holds OLD-00002 FAILED by a refusal that nothing confirmed: the payout may exist.
		ctx := context.Background()
		runID := runid.New(time.Now())
		if err := h.DB.AddRun(ctx, ledger.Run{ID: runID, Kind: "run", File: "old.csv", StartedAt: time.Now(), Status: "finished"}); err != nil {
			t.Fatal(err)
		}
		r := rows[1]
		p := ledger.Payout{Ref: r.Ref, RunID: runID, Line: 3, Recipient: r.Name, ProviderID: batchtest.ProviderID(t, "CIMB"), Bank: r.Bank,
			Account: r.Account, Amount: decimal.RequireFromString(r.Amount), State: ledger.Ready}
		rr := ledger.RunRow{Line: 3, Ref: r.Ref, Recipient: r.Name, ProviderID: p.ProviderID, Bank: r.Bank, Account: r.Account, Amount: r.Amount}
		if err := h.DB.Record(ctx, runID, []ledger.RunRow{rr}, []ledger.Payout{p}); err != nil {
			t.Fatal(err)
		}
		for _, ch := range []ledger.Change{{From: ledger.Ready, To: ledger.Submitting, CountAttempt: true},
			{From: ledger.Submitting, To: ledger.Unknown, Error: "create payout: rejected: HTTP 200 code 1234 status fail"},
			{From: ledger.Unknown, To: ledger.Failed}} {
			ch.Ref, ch.RunID, ch.Detail = r.Ref, runID, "as an older run left it"
			if err := h.DB.Apply(ctx, ch); err != nil {
				t.Fatal(err)
			}
		}
		watchPut(t, rig.path(watch.InboxDir, "old.csv"), watchCSV(rows))
		if worst, err := rig.w.Once(ctx); err != nil || worst != exitcode.Attention {
			t.Fatalf("once: exit %d, %v; want 4; logs:\n%s", worst, err, rig.logs)
		}
		why := batchtest.ReadFile(t, rig.path(watch.FailedDir, "old.csv"+watch.WhySuffix))
		if strings.Contains(why, advice) || !strings.Contains(why, "payout reconcile") {
			t.Errorf("note advises new references for a payout that may exist, or does not send to reconcile:\n%s", why)
		}
	})
}
