package batch_test

import (
	"context"
	"strings"
	"testing"

	"github.com/payout/payout/api"
	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/ledger"
)

// liveSet is a Liveness that knows which claimants still run.
type liveSet map[string]bool

func (s liveSet) Alive(_ context.Context, claimant string) (bool, error) { return s[claimant], nil }

// TestARunLeavesTheClaimsOfALiveProcessAlone: of two payouts other processes left SUBMITTING, the
// one whose process still runs is neither sent nor made UNKNOWN by a run; the one whose process
// is gone is made UNKNOWN, its event naming that process, and looked up before anything is sent
// again (its POST had reached the service: it is found, not paid twice). The run's own sends
// name it.
func TestARunLeavesTheClaimsOfALiveProcessAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := batchtest.NewHarness(t, sandbox.Options{})
	rows := batchtest.Payroll(3, "CLAIM")
	path := batchtest.WritePayroll(t, h.Dir, "claims.csv", rows)
	recordOnly(h, path)
	live, gone := rows[0].Ref, rows[1].Ref
	for ref, claimant := range map[string]string{live: "process-live", gone: "process-gone"} {
		if err := h.DB.Apply(ctx, ledger.Change{Ref: ref, From: ledger.Ready, To: ledger.Submitting, ClaimedBy: claimant,
			Detail: "test: intent of another process"}); err != nil {
			t.Fatal(err)
		}
	}
	// The gone process's POST reached the service before it died.
	p, err := h.DB.Get(ctx, gone)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Client.CreatePayout(ctx, api.CreatePayoutRequest{VirtualPoolReference: h.Cfg.VirtualPoolRef,
		PayoutServiceID: p.ProviderID, Amount: p.Amount, ClientRedirectURL: h.Cfg.RedirectURL, ClientCallbackURL: h.Cfg.CallbackURL,
		ThirdPartyAccountNo: p.Account, RecipientReference: p.Recipient, PaymentDescription: p.Description, ExternalInvoiceRef: gone}); err != nil {
		t.Fatal(err)
	}

	res := h.Run(ctx, path, func(c *batch.Config) {
		c.Process = "process-this"
		c.Liveness = liveSet{"process-this": true, "process-live": true}
	})
	// Not settled as this run sees it: reported, with the exit code that asks for attention.
	if res.ExitCode != exitcode.Attention || res.Unknown != 1 {
		t.Errorf("result %+v: want exit %d, one payout not settled", res, exitcode.Attention)
	}
	counts := h.Sandbox.CreateCounts()
	if counts[live] != 0 || counts[gone] != 1 || counts[rows[2].Ref] != 1 {
		t.Errorf("creates %v: want none of %s (its process runs), one each of the others", counts, live)
	}
	if p, err := h.DB.Get(ctx, live); err != nil || p.State != ledger.Submitting || p.ClaimedBy != "process-live" {
		t.Errorf("the live process's payout: %+v, %v; want SUBMITTING, still its claim", p, err)
	}
	if p, err := h.DB.Get(ctx, gone); err != nil || (p.State != ledger.Submitted && p.State != ledger.Succeeded) {
		t.Errorf("the gone process's payout: %+v, %v; want found at the service", p, err)
	}
	evs, err := h.DB.Events(ctx, gone)
	if err != nil {
		t.Fatal(err)
	}
	recovered := false
	for _, e := range evs {
		recovered = recovered || e.From == ledger.Submitting && e.To == ledger.Unknown && strings.Contains(e.Detail, "process-gone")
	}
	if !recovered {
		t.Errorf("no event of %s names its gone process as it becomes UNKNOWN: %+v", gone, evs)
	}
	if p, err := h.DB.Get(ctx, rows[2].Ref); err != nil || p.ClaimedBy != "process-this" {
		t.Errorf("the run's own send: %+v, %v; want it claimed by the run's process", p, err)
	}
	if rep, err := h.DB.VerifyChain(ctx); err != nil || len(rep.Findings) > 0 {
		t.Errorf("verify: %+v, %v", rep.Findings, err)
	}
}

// TestARunRecoversWhatAnEarlierRunOfItsProcessLeft: a payout this process claimed in a run that
// stopped before it recorded the answer is its own no more once no run of it is sending: the
// next run looks it up before anything is sent (its POST had reached the service), even though
// the process, which holds the ledger, still runs.
func TestARunRecoversWhatAnEarlierRunOfItsProcessLeft(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := batchtest.NewHarness(t, sandbox.Options{})
	rows := batchtest.Payroll(2, "OWN")
	path := batchtest.WritePayroll(t, h.Dir, "own.csv", rows)
	recordOnly(h, path)
	left := rows[0].Ref
	if err := h.DB.Apply(ctx, ledger.Change{Ref: left, From: ledger.Ready, To: ledger.Submitting, ClaimedBy: "process-this",
		Detail: "test: intent of a run that stopped"}); err != nil {
		t.Fatal(err)
	}
	p, err := h.DB.Get(ctx, left)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Client.CreatePayout(ctx, api.CreatePayoutRequest{VirtualPoolReference: h.Cfg.VirtualPoolRef,
		PayoutServiceID: p.ProviderID, Amount: p.Amount, ClientRedirectURL: h.Cfg.RedirectURL, ClientCallbackURL: h.Cfg.CallbackURL,
		ThirdPartyAccountNo: p.Account, RecipientReference: p.Recipient, PaymentDescription: p.Description, ExternalInvoiceRef: left}); err != nil {
		t.Fatal(err)
	}
	res := h.Run(ctx, path, func(c *batch.Config) {
		c.Process, c.Liveness = "process-this", liveSet{"process-this": true}
	})
	if res.ExitCode != exitcode.OK {
		t.Errorf("result %+v", res)
	}
	h.AssertExactlyOnce(rows, res)
}

// recoveredFirst is the liveness a start sees while another process starting at the same moment
// recovers the same gone claimant's payouts: by the time this one is told the claimant is gone,
// the other has made them UNKNOWN.
type recoveredFirst struct {
	db   *ledger.DB
	refs []string
}

func (r recoveredFirst) Alive(ctx context.Context, _ string) (bool, error) {
	for _, ref := range r.refs {
		if err := r.db.Apply(ctx, ledger.Change{Ref: ref, From: ledger.Submitting, To: ledger.Unknown,
			Detail: "test: recovered by another process first"}); err != nil {
			return false, err
		}
	}
	return false, nil
}

// TestRecoveryToleratesAnotherRecoverer: two starts recover a gone process's SUBMITTING payouts
// at the same moment; the one that finds them recovered already goes on, as the other did,
// instead of stopping on "is UNKNOWN, expected SUBMITTING" and leaving its run "running".
func TestRecoveryToleratesAnotherRecoverer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := batchtest.NewHarness(t, sandbox.Options{})
	rows := batchtest.Payroll(2, "RACE")
	path := batchtest.WritePayroll(t, h.Dir, "race.csv", rows)
	recordOnly(h, path)
	refs := []string{rows[0].Ref, rows[1].Ref}
	for _, ref := range refs {
		if err := h.DB.Apply(ctx, ledger.Change{Ref: ref, From: ledger.Ready, To: ledger.Submitting, ClaimedBy: "process-gone",
			Detail: "test: intent of a process that then died"}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := h.Cfg
	cfg.Process, cfg.Liveness = "process-this", recoveredFirst{db: h.DB, refs: refs}
	if err := cfg.RecoverInterrupted(ctx, ""); err != nil {
		t.Fatalf("a start that found the payouts recovered already stopped: %v", err)
	}
	for _, ref := range refs {
		events, err := h.DB.Events(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		recovered := 0
		for _, e := range events {
			if e.From == ledger.Submitting && e.To == ledger.Unknown {
				recovered++
			}
		}
		if p, err := h.DB.Get(ctx, ref); err != nil || p.State != ledger.Unknown || recovered != 1 {
			t.Errorf("%s: %s after %d recoveries (%v), want UNKNOWN after one", ref, p.State, recovered, err)
		}
	}
}
