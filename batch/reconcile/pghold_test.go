package reconcile_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/payout/payout/api"
	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/reconcile"
	"github.com/payout/payout/internal/pgtest"
	"github.com/payout/payout/ledger"
	"github.com/payout/payout/ledger/ledgertest"
)

// TestReconcileOnAPostgresLedgerLeavesALiveProcesssPayoutAlone: reconcile, holding the ledger as
// `payout reconcile` does, looks up the payout a process whose session ended left SUBMITTING (it
// had reached the service: found), and leaves a running process's alone until that one ends too.
func TestReconcileOnAPostgresLedgerLeavesALiveProcesssPayoutAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newReconBench(t, sandbox.Faults{})
	url := pgtest.New(t)
	ledgertest.HoldSchema(t, url)
	var holds []ledger.Hold
	for range 3 {
		h, err := ledger.Take(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.Close() })
		holds = append(holds, h)
	}
	live, gone, this := holds[0], holds[1], holds[2]
	as := func(h ledger.Hold) func(*batch.Config) {
		return func(c *batch.Config) { c.Process, c.Liveness, c.Files = h.Self().Claimant(), h, h }
	}

	// A run that recorded its file and stopped before sending anything.
	path := filepath.Join(b.dir, "pg.csv")
	if err := os.WriteFile(path, []byte("external_invoice_ref,recipient_reference,bank,third_party_account_no,amount\n"+
		"PG-1,Employee 1,Maybank,1234567001,10.00\nPG-2,Employee 2,Maybank,1234567002,20.00\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stop, cancel := context.WithCancel(ctx)
	defer cancel()
	if _, err := b.runner(func(c *batch.Config) { c.Progress = func(int, int) { cancel() } }).Run(stop, path); err != nil {
		t.Fatal(err)
	}
	for ref, h := range map[string]ledger.Hold{"PG-1": live, "PG-2": gone} {
		if err := b.db.Apply(ctx, ledger.Change{Ref: ref, From: ledger.Ready, To: ledger.Submitting, ClaimedBy: h.Self().Claimant(),
			Detail: "test: sent by another process"}); err != nil {
			t.Fatal(err)
		}
	}
	p, err := b.db.Get(ctx, "PG-2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.CreatePayout(ctx, api.CreatePayoutRequest{VirtualPoolReference: b.cfg.VirtualPoolRef,
		PayoutServiceID: p.ProviderID, Amount: p.Amount, ClientRedirectURL: b.cfg.RedirectURL, ClientCallbackURL: b.cfg.CallbackURL,
		ThirdPartyAccountNo: p.Account, RecipientReference: p.Recipient, PaymentDescription: p.Description, ExternalInvoiceRef: p.Ref}); err != nil {
		t.Fatal(err)
	}
	if err := gone.Close(); err != nil {
		t.Fatal(err)
	}

	if _, err := reconcile.Run(ctx, b.runner(as(this)).Config(), reconcile.Options{}); err != nil {
		t.Fatal(err)
	}
	if p, err := b.db.Get(ctx, "PG-1"); err != nil || p.State != ledger.Submitting {
		t.Errorf("the running process's payout after reconcile: %+v, %v; want SUBMITTING, left alone", p, err)
	}
	if p, err := b.db.Get(ctx, "PG-2"); err != nil || p.State != ledger.Submitted {
		t.Errorf("the ended process's payout after reconcile: %+v, %v; want found SUBMITTED", p, err)
	}
	if err := live.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := reconcile.Run(ctx, b.runner(as(this)).Config(), reconcile.Options{}); err != nil {
		t.Fatal(err)
	}
	if p, err := b.db.Get(ctx, "PG-1"); err != nil || p.State == ledger.Submitting {
		t.Errorf("its payout once that process ended too: %+v, %v; want looked up", p, err)
	}
	if n := b.sandbox.CreateCounts()["PG-1"]; n != 0 {
		t.Errorf("reconcile created PG-1 %d times; it never sends", n)
	}
}
