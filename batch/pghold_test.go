package batch_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/batch/runid"
	"github.com/payout/payout/batch/runs"
	"github.com/payout/payout/internal/pgtest"
	"github.com/payout/payout/ledger"
	"github.com/payout/payout/ledger/ledgertest"
)

// pgHolds takes n holds of processes sharing one PostgreSQL database, as n hosts would: their
// liveness and file locks are the server's; the payouts stay in the harness's ledger.
func pgHolds(t *testing.T, n int) []ledger.Hold {
	t.Helper()
	url := pgtest.New(t)
	ledgertest.HoldSchema(t, url)
	var holds []ledger.Hold
	for range n {
		h, err := ledger.Take(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.Close() })
		holds = append(holds, h)
	}
	return holds
}

// as makes a run's config the process of hold h's, as `payout run` wires it.
func as(h ledger.Hold) func(*batch.Config) {
	return func(c *batch.Config) { c.Process, c.Liveness, c.Files = h.Self().Claimant(), h, h }
}

// TestTwoProcessesPayingOneFileOnAPostgresLedger: while one process pays a file, a run of it by
// another stops before it records or sends anything, naming that process; a run of another file
// goes on, and once it ended the file is free; the first pays its file exactly once.
func TestTwoProcessesPayingOneFileOnAPostgresLedger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := batchtest.NewHarness(t, sandbox.Options{})
	holds := pgHolds(t, 2)
	a, b := holds[0], holds[1]
	rows := batchtest.Payroll(3, "ONE")
	path := batchtest.WritePayroll(t, h.Dir, "one.csv", rows)
	sum, err := read.FileSHA256(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.PayFile(ctx, sum); err != nil { // a is paying it
		t.Fatal(err)
	}
	cfg := h.Cfg
	as(b)(&cfg)
	_, err = batch.NewRunner(cfg).Run(ctx, path)
	want := fmt.Sprintf("pid=%d host=%s ", a.Self().PID, a.Self().Host)
	if !errors.Is(err, ledger.ErrLocked) || !strings.Contains(err.Error(), want) || exitcode.OfError(err) != exitcode.Aborted {
		t.Fatalf("b's run of a's file: %v; want ErrLocked naming %q, exit %d", err, want, exitcode.Aborted)
	}
	if runs, err := h.DB.FindRuns(ctx, ledger.RunFilter{}); err != nil || len(runs) != 0 || h.Sandbox.Stats().Creates != 0 {
		t.Errorf("b's refused run left runs %+v (%v) and %d creates; want nothing", runs, err, h.Sandbox.Stats().Creates)
	}
	other := batchtest.Payroll(2, "TWO")
	otherPath := batchtest.WritePayroll(t, h.Dir, "two.csv", other)
	if res := h.Run(ctx, otherPath, as(b)); res.ExitCode != exitcode.OK {
		t.Errorf("b's run of another file: %+v", res)
	}
	// Its run ended, b keeps nobody off that file: a rerun by a resumes (nothing left to send).
	if res := h.Run(ctx, otherPath, as(a)); res.ExitCode != exitcode.OK || res.Skipped != len(other) {
		t.Errorf("a's rerun of b's file once b's run ended: %+v", res)
	}
	res := h.Run(ctx, path, as(a))
	if res.ExitCode != exitcode.OK {
		t.Errorf("a's run: %+v", res)
	}
	h.AssertExactlyOnce(rows, res)
}

// TestAGoneProcessesClaimsAreLookedUpOnAPostgresLedger: of the payouts two other processes left
// SUBMITTING, a run leaves the live one's alone and looks up the closed one's (found: its POST
// had reached the service) before anything is sent; once the live one is gone too, a recovery
// (as reconcile makes it) finds its payout.
func TestAGoneProcessesClaimsAreLookedUpOnAPostgresLedger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := batchtest.NewHarness(t, sandbox.Options{})
	holds := pgHolds(t, 3)
	live, gone, this := holds[0], holds[1], holds[2]
	rows := batchtest.Payroll(3, "PGCLAIM")
	path := batchtest.WritePayroll(t, h.Dir, "claims.csv", rows)
	recordOnly(h, path)
	for ref, hold := range map[string]ledger.Hold{rows[0].Ref: live, rows[1].Ref: gone} {
		if err := h.DB.Apply(ctx, ledger.Change{Ref: ref, From: ledger.Ready, To: ledger.Submitting, ClaimedBy: hold.Self().Claimant(),
			Detail: "test: intent of another process"}); err != nil {
			t.Fatal(err)
		}
	}
	p, err := h.DB.Get(ctx, rows[1].Ref)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Client.CreatePayout(ctx, api.CreatePayoutRequest{VirtualPoolReference: h.Cfg.VirtualPoolRef,
		PayoutServiceID: p.ProviderID, Amount: p.Amount, ClientRedirectURL: h.Cfg.RedirectURL, ClientCallbackURL: h.Cfg.CallbackURL,
		ThirdPartyAccountNo: p.Account, RecipientReference: p.Recipient, PaymentDescription: p.Description, ExternalInvoiceRef: p.Ref}); err != nil {
		t.Fatal(err)
	}
	if err := gone.Close(); err != nil {
		t.Fatal(err)
	}

	res := h.Run(ctx, path, as(this))
	counts := h.Sandbox.CreateCounts()
	if counts[rows[0].Ref] != 0 || counts[rows[1].Ref] != 1 || counts[rows[2].Ref] != 1 || res.Unknown != 1 {
		t.Errorf("creates %v, result %+v: want none of the live process's payout, one of each other", counts, res)
	}
	if p, err := h.DB.Get(ctx, rows[0].Ref); err != nil || p.State != ledger.Submitting || p.ClaimedBy != live.Self().Claimant() {
		t.Errorf("the live process's payout: %+v, %v; want SUBMITTING, its claim", p, err)
	}
	if p, err := h.DB.Get(ctx, rows[1].Ref); err != nil || !p.State.Accepted() {
		t.Errorf("the gone process's payout: %+v, %v; want found at the service", p, err)
	}

	if err := live.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := h.Cfg
	as(this)(&cfg)
	if err := cfg.RecoverInterrupted(ctx, res.RunID); err != nil {
		t.Fatal(err)
	}
	if p, err := h.DB.Get(ctx, rows[0].Ref); err != nil || p.State != ledger.Unknown {
		t.Errorf("the payout of the process gone since: %+v, %v; want UNKNOWN, to be looked up", p, err)
	}
}

// TestARunClosesOnlyTheRunsOfFilesNobodyPays: on a ledger several processes pay from, a run
// leaves "running" the run of a file another process is paying, and closes as interrupted the one
// whose process is gone.
func TestARunClosesOnlyTheRunsOfFilesNobodyPays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := batchtest.NewHarness(t, sandbox.Options{})
	holds := pgHolds(t, 2)
	a, b := holds[0], holds[1]
	const paid = "5555aaaa"
	other := ledger.Run{ID: runid.New(time.Now().Add(-time.Minute)), Kind: ledger.KindRun, File: "a.csv", FileSHA256: paid,
		StartedAt: time.Now().Add(-time.Minute).UTC()}
	if err := runs.Open(ctx, h.DB, other); err != nil {
		t.Fatal(err)
	}
	if err := a.PayFile(ctx, paid); err != nil { // a's run of it is at work
		t.Fatal(err)
	}
	running := func() bool {
		t.Helper()
		runs, err := h.DB.FindRuns(ctx, ledger.RunFilter{Status: ledger.RunRunning})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			if r.ID == other.ID {
				return true
			}
		}
		return false
	}
	path := batchtest.WritePayroll(t, h.Dir, "b.csv", batchtest.Payroll(2, "RUNS"))
	if res := h.Run(ctx, path, as(b)); res.ExitCode != exitcode.OK || !running() {
		t.Fatalf("b's run while a pays its file: %+v; a's run running: %v, want it left running", res, running())
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if res := h.Run(ctx, path, as(b)); res.ExitCode != exitcode.OK || running() {
		t.Errorf("b's run once a is gone: %+v; a's run still running, want it closed as interrupted", res)
	}
}
