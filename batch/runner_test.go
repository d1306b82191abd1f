package batch_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/xuri/excelize/v2"

	"github.com/payout/payout/api"
	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/pool"
	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/ledger"
	"github.com/payout/payout/ledger/ledgertest"
)

// TestRunUnthrottled is the one short run with no rate limit, a sandbox that answers at once and
// 32 workers: every row is created exactly once although answers are lost at full concurrency.
func TestRunUnthrottled(t *testing.T) {
	t.Parallel()
	h := batchtest.NewUnthrottledHarness(t, sandbox.Options{Faults: sandbox.Faults{LostResponseRate: 0.1}}, 32)
	rows := batchtest.Payroll(200, "UNTHROTTLED")
	res := h.Run(context.Background(), batchtest.WritePayroll(t, h.Dir, "unthrottled.csv", rows), nil)
	if res.ExitCode != exitcode.OK || res.Submitted != len(rows) {
		t.Fatalf("result %+v, want exit 0 with %d submitted", res, len(rows))
	}
	h.AssertExactlyOnce(rows, res)
	if st := h.Sandbox.Stats(); st.Lost == 0 || st.Creates != len(rows) {
		t.Errorf("stats %+v, want some answers lost and %d creates", st, len(rows))
	}
}

func TestRunHappyPath(t *testing.T) {
	t.Parallel()
	h := batchtest.NewHarness(t, sandbox.Options{})
	rows := batchtest.Payroll(60, "HAPPY")
	path := batchtest.WritePayroll(t, h.Dir, "november.csv", rows)
	res := h.Run(context.Background(), path, nil)
	if res.ExitCode != exitcode.OK || res.Submitted != len(rows) || res.Skipped != 0 {
		t.Fatalf("result %+v, want exit 0 with %d submitted", res, len(rows))
	}
	h.AssertExactlyOnce(rows, res)
	for _, p := range res.Reports {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("report %s: %v", p, err)
		}
	}

	// A rerun of a finished file sends nothing and counts every row as skipped.
	before := h.Sandbox.Stats()
	again := h.Run(context.Background(), path, nil)
	if again.ExitCode != exitcode.OK || again.Skipped != len(rows) || again.Submitted != 0 {
		t.Fatalf("rerun %+v, want exit 0 with every row skipped", again)
	}
	if after := h.Sandbox.Stats(); after.Creates != before.Creates {
		t.Errorf("rerun sent %d creates, want none", after.Creates-before.Creates)
	}
	h.AssertExactlyOnce(rows, again)
}

func TestRunFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		faults sandbox.Faults
	}{
		{"lost responses at 20%", sandbox.Faults{LostResponseRate: 0.2}},
		{"5xx at 10%", sandbox.Faults{ErrorRate: 0.1}},
		{"429 storm", sandbox.Faults{RateLimit: 40}},
		{"lost responses and 5xx", sandbox.Faults{LostResponseRate: 0.15, ErrorRate: 0.1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := batchtest.NewHarness(t, sandbox.Options{Faults: tt.faults})
			rows := batchtest.Payroll(80, "FAULT")
			path := batchtest.WritePayroll(t, h.Dir, "faults.csv", rows)
			res := h.Run(context.Background(), path, nil)
			if res.ExitCode != exitcode.OK {
				t.Fatalf("result %+v, want exit 0", res)
			}
			h.AssertExactlyOnce(rows, res)
			h.AssertRate() // the retries and lookups too
		})
	}
}

func TestRunServiceDownThenRerun(t *testing.T) {
	t.Parallel()
	h := batchtest.NewHarness(t, sandbox.Options{})
	rows := batchtest.Payroll(80, "DOWN")
	path := batchtest.WritePayroll(t, h.Dir, "down.csv", rows)
	var downed atomic.Bool
	res := h.Run(context.Background(), path, func(c *batch.Config) {
		c.BreakerThreshold = 5
		c.Workers = 2 // few rows in flight, so that the service goes down with most still to send
		c.Progress = func(done, total int) {
			if done >= 25 && downed.CompareAndSwap(false, true) {
				h.Sandbox.SetDown(true)
			}
		}
	})
	if res.ExitCode != exitcode.Aborted {
		t.Fatalf("result %+v, want exit 1 while the service is down", res)
	}
	h.Sandbox.SetDown(false)
	res = h.Run(context.Background(), path, nil)
	if res.ExitCode != exitcode.OK {
		t.Fatalf("rerun %+v, want exit 0", res)
	}
	h.AssertExactlyOnce(rows, res)
}

func TestRunCancelThenResume(t *testing.T) {
	t.Parallel()
	h := batchtest.NewHarness(t, sandbox.Options{Faults: sandbox.Faults{LostResponseRate: 0.1}})
	rows := batchtest.Payroll(80, "CANCEL")
	path := batchtest.WritePayroll(t, h.Dir, "cancel.csv", rows)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res := h.Run(ctx, path, func(c *batch.Config) {
		c.Workers = 2 // few rows in flight, so that the cancel stops it with most still to send
		c.Progress = func(done, total int) {
			if done >= 20 {
				cancel()
			}
		}
	})
	if res.ExitCode != exitcode.Aborted || res.Aborted == "" {
		t.Fatalf("result %+v, want exit 1 after cancel", res)
	}
	if created := len(h.Sandbox.CreateCounts()); created >= len(rows) {
		t.Fatalf("cancel did not stop dispatching: %d of %d created", created, len(rows))
	}
	// A stop leaves no intent without its answer: rows whose request was not sent went back to
	// READY (so the rerun need not wait out a lookup's grace for them).
	if stuck := ledgertest.Payouts(t, h.DB, ledger.Filter{States: []ledger.State{ledger.Submitting}}); len(stuck) > 0 {
		t.Fatalf("after a cancel %d rows are SUBMITTING", len(stuck))
	}
	// Every payout is recorded READY before anything is sent: the rows the run never reached are
	// READY with nothing but their "recorded" event, and the report has every row, the unsent ones
	// READY, with the file's total.
	byRef := h.AssertReport(res, len(rows), batchtest.FileTotal(rows))
	firstRun := res.RunID
	unsent := 0
	var unsentRef string
	var unsentLine int
	for i, r := range rows {
		p, err := h.DB.Get(context.Background(), r.Ref)
		if err != nil {
			t.Fatalf("%s not recorded by the run: %v", r.Ref, err)
		}
		if p.State != ledger.Ready {
			continue
		}
		unsent++
		unsentRef, unsentLine = r.Ref, i+2
		// Never sent: only recorded, or its intent recorded and withdrawn when the stop came
		// while it waited for its turn.
		evs, err := h.DB.Events(context.Background(), r.Ref)
		withdrawn := len(evs) == 3 && evs[1].To == ledger.Submitting && evs[2].To == ledger.Ready && strings.HasPrefix(evs[2].Detail, "not sent")
		if err != nil || (len(evs) != 1 && !withdrawn) || p.Attempts != 0 {
			t.Errorf("%s, never sent: %d attempts, events %+v (%v)", r.Ref, p.Attempts, evs, err)
		}
		if got := strings.Join(byRef[r.Ref], ","); !strings.Contains(got, ",READY,") || !strings.Contains(got, "the run stopped before this row") {
			t.Errorf("report row of %s, never sent: %q", r.Ref, got)
		}
	}
	if unsent == 0 || res.NotSent != unsent {
		t.Errorf("%d rows READY, %d not sent in the result %+v", unsent, res.NotSent, res)
	}
	res = h.Run(context.Background(), path, nil)
	if res.ExitCode != exitcode.OK {
		t.Fatalf("resume %+v, want exit 0", res)
	}
	h.AssertExactlyOnce(rows, res)
	evs, err := h.DB.Events(context.Background(), unsentRef)
	if err != nil || len(evs) < 3 || evs[0].To != ledger.Ready || evs[0].Detail != fmt.Sprintf("recorded from %s line %d", path, unsentLine) ||
		evs[0].RunID != firstRun || evs[1].From != ledger.Ready || evs[1].To != ledger.Submitting || evs[1].RunID != res.RunID ||
		!acceptedAfterIntent(evs[2:]) {
		t.Errorf("events of %s, sent by the resume: %+v %v", unsentRef, evs, err)
	}
}

// acceptedAfterIntent says that the events after a row's intent show it accepted: at once, or,
// when the sandbox lost the answer (it loses some in these tests), after a lookup found it.
func acceptedAfterIntent(evs []ledger.Event) bool {
	if len(evs) > 0 && evs[0].To == ledger.Unknown {
		evs = evs[1:]
	}
	return len(evs) > 0 && evs[0].To == ledger.Submitted
}

func TestRunReferenceReusedWithOtherAmount(t *testing.T) {
	t.Parallel()
	h := batchtest.NewHarness(t, sandbox.Options{})
	rows := batchtest.Payroll(5, "REUSE")
	res := h.Run(context.Background(), batchtest.WritePayroll(t, h.Dir, "first.csv", rows), nil)
	if res.ExitCode != exitcode.OK {
		t.Fatalf("first run %+v", res)
	}
	changed := append([]batchtest.PayrollRow(nil), rows...)
	changed[2].Amount = "99999.00"
	before := h.Sandbox.Stats().Creates
	res = h.Run(context.Background(), batchtest.WritePayroll(t, h.Dir, "second.csv", changed), nil)
	if res.ExitCode != exitcode.Rejected || res.Rejected != 1 {
		t.Fatalf("second run %+v, want exit 3 with one row rejected", res)
	}
	if after := h.Sandbox.Stats().Creates; after != before {
		t.Errorf("a rejected file sent %d creates", after-before)
	}
	byRef := h.AssertReport(res, len(changed), batchtest.FileTotal(changed))
	if got := strings.Join(byRef[changed[2].Ref], ","); !strings.Contains(got, "REJECTED") || !strings.Contains(got, "ledger") {
		t.Errorf("reused reference's report row %q, want REJECTED naming the ledger", got)
	}
	p, err := h.DB.Get(context.Background(), changed[2].Ref)
	if err != nil || !p.Amount.Equal(decimal.RequireFromString(rows[2].Amount)) {
		t.Errorf("ledger row overwritten: %+v, %v", p, err)
	}
}

func TestRunUnknownOutcomes(t *testing.T) {
	t.Parallel()
	t.Run("not found after the grace is sent again exactly once", func(t *testing.T) {
		// Every request answers 503 before creating anything: each row becomes UNKNOWN and its
		// lookups fail too. Once the service is back, the rerun looks each up, finds it missing by
		// spaced lookups over the grace, and sends it again, once.
		h := batchtest.NewHarness(t, sandbox.Options{})
		// An earlier payout that exists: lookups of it prove that "not found" means something.
		if res := h.Run(context.Background(), batchtest.WritePayroll(t, h.Dir, "known.csv", batchtest.Payroll(2, "KNOWN")), nil); res.ExitCode != exitcode.OK {
			t.Fatalf("setup run %+v", res)
		}
		rows := batchtest.Payroll(10, "GRACE")
		path := batchtest.WritePayroll(t, h.Dir, "grace.csv", rows)
		res := h.Run(context.Background(), path, batchtest.FailAfterProviders(h, sandbox.Faults{ErrorRate: 1}))
		if res.Unknown != len(rows) || res.ExitCode != exitcode.Attention {
			t.Fatalf("result %+v, want every row unknown while every request fails", res)
		}
		if n := h.Sandbox.Stats().Creates; n != 2 {
			t.Fatalf("%d creates while the service refused everything, want only the 2 earlier ones", n-2)
		}
		h.Sandbox.SetFaults(sandbox.Faults{})
		res = h.Run(context.Background(), path, nil)
		if res.ExitCode != exitcode.OK {
			t.Fatalf("rerun %+v, want exit 0", res)
		}
		h.AssertExactlyOnce(rows, res)
		events, err := h.DB.Events(context.Background(), rows[0].Ref)
		if err != nil {
			t.Fatal(err)
		}
		notFound := 0
		for _, ev := range events {
			if strings.Contains(ev.Detail, "not found") {
				notFound++
			}
		}
		if notFound < 3 {
			t.Errorf("events of %s show %d not-found lookups, want at least 3 before a resend: %+v", rows[0].Ref, notFound, events)
		}
	})
	t.Run("--no-resend-unknown keeps them for reconciliation", func(t *testing.T) {
		h := batchtest.NewHarness(t, sandbox.Options{})
		rows := batchtest.Payroll(4, "KEEP")
		path := batchtest.WritePayroll(t, h.Dir, "keep.csv", rows)
		h.Run(context.Background(), path, batchtest.FailAfterProviders(h, sandbox.Faults{ErrorRate: 1}))
		h.Sandbox.SetFaults(sandbox.Faults{})
		res := h.Run(context.Background(), path, func(c *batch.Config) { c.NoResendUnknown = true })
		if res.ExitCode != exitcode.Attention || res.Unknown != len(rows) {
			t.Fatalf("result %+v, want exit 4 with every row unknown", res)
		}
		if n := h.Sandbox.Stats().Creates; n != 0 {
			t.Errorf("%d creates, want none", n)
		}
	})
	t.Run("never resent while no lookup of an existing payout has worked", func(t *testing.T) {
		// A fresh ledger, nothing ever accepted: "not found" cannot be told from a broken lookup.
		h := batchtest.NewHarness(t, sandbox.Options{})
		rows := batchtest.Payroll(2, "UNPROVEN")
		path := batchtest.WritePayroll(t, h.Dir, "unproven.csv", rows)
		h.Run(context.Background(), path, batchtest.FailAfterProviders(h, sandbox.Faults{ErrorRate: 1}))
		h.Sandbox.SetFaults(sandbox.Faults{})
		res := h.Run(context.Background(), path, nil)
		if res.ExitCode != exitcode.Attention || res.Unknown != len(rows) {
			t.Fatalf("result %+v, want the rows kept UNKNOWN", res)
		}
		if n := h.Sandbox.Stats().Creates; n != 0 {
			t.Errorf("%d creates, want none", n)
		}
	})
}

func TestRunInterruptedSubmittingIsLookedUpFirst(t *testing.T) {
	t.Parallel()
	// A process killed between recording SUBMITTING and recording the answer, after the service
	// created the payout. The next run must find it by lookup, not send it again.
	h := batchtest.NewHarness(t, sandbox.Options{})
	rows := batchtest.Payroll(3, "KILLED")
	for i := range rows {
		rows[i].Bank = "Maybank"
	}
	path := batchtest.WritePayroll(t, h.Dir, "killed.csv", rows)
	ctx := context.Background()
	if err := h.DB.AddRun(ctx, ledger.Run{ID: "killed-run", Kind: "run", File: path, StartedAt: time.Now(), Status: "running"}); err != nil {
		t.Fatal(err)
	}
	var fresh []ledger.Payout
	for i, r := range rows {
		fresh = append(fresh, ledger.Payout{Ref: r.Ref, RunID: "killed-run", Line: i + 2, Recipient: r.Name, ProviderID: batchtest.ProviderID(t, "Maybank"),
			Bank: "Maybank", Account: r.Account, Amount: decimal.RequireFromString(r.Amount), State: ledger.Ready})
	}
	if err := h.DB.Record(ctx, "killed-run", nil, fresh); err != nil {
		t.Fatal(err)
	}
	for _, p := range fresh {
		if err := h.DB.Apply(ctx, ledger.Change{Ref: p.Ref, From: ledger.Ready, To: ledger.Submitting, CountAttempt: true}); err != nil {
			t.Fatal(err)
		}
		_, err := h.Client.CreatePayout(ctx, api.CreatePayoutRequest{VirtualPoolReference: "POOL-1", PayoutServiceID: p.ProviderID,
			Amount: p.Amount, ClientRedirectURL: "http://127.0.0.1:1/r", ClientCallbackURL: "http://127.0.0.1:1/c",
			ThirdPartyAccountNo: p.Account, RecipientReference: p.Recipient, ExternalInvoiceRef: p.Ref})
		if err != nil {
			t.Fatal(err)
		}
	}
	res := h.Run(ctx, path, nil)
	if res.ExitCode != exitcode.OK {
		t.Fatalf("rerun %+v, want exit 0", res)
	}
	h.AssertExactlyOnce(rows, res)
}

func TestRunRejectedFileSendsNothing(t *testing.T) {
	t.Parallel()
	h := batchtest.NewHarness(t, sandbox.Options{})
	rows := batchtest.Payroll(6, "BAD")
	rows[3].Amount = "12.345"
	rows[4].Bank = "Bank of Atlantis"
	path := batchtest.WritePayroll(t, h.Dir, "bad.csv", rows)
	res := h.Run(context.Background(), path, nil)
	if res.ExitCode != exitcode.Rejected || res.Rejected != 2 {
		t.Fatalf("result %+v, want exit 3 with 2 rejected", res)
	}
	if len(res.Problems) != 2 || res.Problems[0].Line != 5 || res.Problems[0].Column != "amount" ||
		res.Problems[1].Line != 6 || res.Problems[1].Column != "bank" || res.Problems[1].Value != "Bank of Atlantis" {
		t.Errorf("problems %+v, want line 5 amount and line 6 bank", res.Problems)
	}
	if n := h.Sandbox.Stats().Creates; n != 0 {
		t.Fatalf("a rejected file sent %d creates", n)
	}
	if list := ledgertest.Payouts(t, h.DB, ledger.Filter{}); len(list) != 0 {
		t.Fatalf("a rejected file wrote payouts: %d", len(list))
	}

	t.Run("allow partial pays the valid rows", func(t *testing.T) {
		res := h.Run(context.Background(), path, func(c *batch.Config) { c.AllowPartial = true })
		if res.ExitCode != exitcode.Attention || res.Rejected != 2 || res.Submitted != 4 {
			t.Fatalf("result %+v, want exit 4, 2 rejected, 4 submitted", res)
		}
		counts := h.Sandbox.CreateCounts()
		for i, r := range rows {
			want := 1
			if i == 3 || i == 4 {
				want = 0
			}
			if counts[r.Ref] != want {
				t.Errorf("%s created %d times, want %d", r.Ref, counts[r.Ref], want)
			}
		}
	})
}

func TestRunDryRun(t *testing.T) {
	t.Parallel()
	h := batchtest.NewHarness(t, sandbox.Options{})
	rows := batchtest.Payroll(10, "DRY")
	path := batchtest.WritePayroll(t, h.Dir, "dry.csv", rows)
	res := h.Run(context.Background(), path, func(c *batch.Config) { c.DryRun = true })
	if res.ExitCode != exitcode.OK || !res.DryRun || res.Rows != 10 {
		t.Fatalf("result %+v, want a dry run of 10 valid rows", res)
	}
	if n := h.Sandbox.Stats().Creates; n != 0 {
		t.Fatalf("dry run sent %d creates", n)
	}
	if list := ledgertest.Payouts(t, h.DB, ledger.Filter{}); len(list) != 0 {
		t.Fatalf("dry run wrote payouts: %d", len(list))
	}
	h.AssertReport(res, len(rows), batchtest.FileTotal(rows))
}

func TestRunUnauthorizedAborts(t *testing.T) {
	t.Parallel()
	h := batchtest.NewHarness(t, sandbox.Options{})
	bad, err := api.NewClient(api.Config{BaseURL: h.Server.URL, AuthToken: "wrong-token", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	path := batchtest.WritePayroll(t, h.Dir, "auth.csv", batchtest.Payroll(2, "AUTH"))
	_, err = batch.NewRunner(func() batch.Config { c := h.Cfg; c.Service = bad; return c }()).Run(context.Background(), path)
	if err == nil || api.KindOf(err) != api.KindUnauthorized {
		t.Fatalf("err %v, want unauthorized", err)
	}
	if strings.Contains(err.Error(), "wrong-token") {
		t.Errorf("error echoes the token: %v", err)
	}
	want := "list providers: the service refused the auth token (HTTP 401: invalid auth-token): check PAYOUT_AUTH_TOKEN / PAYOUT_AUTH_TOKEN_FILE"
	if err.Error() != want {
		t.Errorf("error %q, want %q: one prefix, what was refused and what to check", err, want)
	}
	if errors.Is(err, pool.ErrAborted) {
		t.Errorf("nothing was started, so nothing to resume: %v", err)
	}
}

func TestRunReportsXLSXWarnings(t *testing.T) {
	t.Parallel()
	// An account typed as a number in a spreadsheet: Excel keeps 15 significant digits, so a longer
	// one may have lost digits. Accepted with --numeric-accounts, the row is paid as read, and its
	// report row says to check it.
	h := batchtest.NewHarness(t, sandbox.Options{})
	f := excelize.NewFile()
	defer f.Close()
	rows := [][]any{
		{"external_invoice_ref", "recipient_reference", "bank", "third_party_account_no", "amount"},
		{"WARN-1", "Aminah binti Yusof", "Maybank", "012345678901", 1500.5},
		{"WARN-2", "Tan Wei Ming", "CIMB Bank Berhad", 12345678901234567.0, 2000},
	}
	for i, row := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := f.SetSheetRow("Sheet1", cell, &row); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(h.Dir, "warn.xlsx")
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	res := h.Run(context.Background(), path, func(c *batch.Config) { c.Read.NumericAccounts = true })
	if res.ExitCode != exitcode.OK {
		t.Fatalf("result %+v", res)
	}
	byRef := h.AssertReport(res, 2, decimal.RequireFromString("3500.50"))
	if got := strings.Join(byRef["WARN-2"], ","); !strings.Contains(got, read.WarnAccountNumber) {
		t.Errorf("report row %q does not carry the warning", got)
	}
	if len(res.Warnings) != 1 || res.Warnings[0].Line != 3 || res.Warnings[0].Column != "third_party_account_no" {
		t.Errorf("warnings %+v, want line 3's account", res.Warnings)
	}
	if got := strings.Join(byRef["WARN-1"], ","); strings.Contains(got, read.WarnAccountNumber) {
		t.Errorf("a text account was flagged: %q", got)
	}
}

// TestRunRefusedCreateIsLookedUp: a create answered "fail" is looked up once by reference before
// the row is final FAILED, because a service has been seen to make the payout all the same.
func TestRunRefusedCreateIsLookedUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("created all the same: found, never FAILED, never sent again", func(t *testing.T) {
		h := batchtest.NewHarness(t, sandbox.Options{})
		rows := batchtest.Payroll(6, "MADE")
		path := batchtest.WritePayroll(t, h.Dir, "made.csv", rows)
		res := h.Run(ctx, path, batchtest.FailAfterProviders(h, sandbox.Faults{FailAfterCreateRate: 1}))
		if res.ExitCode != exitcode.OK || res.Failed != 0 || res.Submitted != len(rows) {
			t.Fatalf("result %+v, want exit 0 with every row found at the service", res)
		}
		h.AssertExactlyOnce(rows, res)
		events, err := h.DB.Events(ctx, rows[0].Ref)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(fmt.Sprint(events), "refused by the service, but found by external_invoice_ref") {
			t.Errorf("events of %s do not say the refused payout was found: %+v", rows[0].Ref, events)
		}
		h.Sandbox.SetFaults(sandbox.Faults{})
		if again := h.Run(ctx, path, nil); again.ExitCode != exitcode.OK || again.Skipped != len(rows) {
			t.Fatalf("rerun %+v, want every row skipped", again)
		}
		h.AssertExactlyOnce(rows, res)
	})
	t.Run("not found: final FAILED, confirmed", func(t *testing.T) {
		// The sandbox refuses amounts over 1000.00 (HTTP 400) and creates nothing.
		h := batchtest.NewHarness(t, sandbox.Options{MaxAmount: decimal.RequireFromString("1000.00")})
		rows := batchtest.Payroll(2, "OVER")
		path := batchtest.WritePayroll(t, h.Dir, "over.csv", rows)
		res := h.Run(ctx, path, nil)
		if res.ExitCode != exitcode.Attention || res.Failed != 1 || res.Succeeded+res.Pending != 1 {
			t.Fatalf("result %+v, want exit 4 with one row FAILED", res)
		}
		p, err := h.DB.Get(ctx, rows[1].Ref)
		if err != nil {
			t.Fatal(err)
		}
		if p.State != ledger.Failed || !outcome.FailureConfirmed(p) {
			t.Errorf("refused row %+v, want FAILED with its refusal confirmed", p)
		}
		if n := h.Sandbox.CreateCounts()[rows[1].Ref]; n != 0 {
			t.Errorf("refused row created %d times", n)
		}
	})
	t.Run("the lookup fails: UNKNOWN, never FAILED", func(t *testing.T) {
		h := batchtest.NewHarness(t, sandbox.Options{})
		rows := batchtest.Payroll(3, "MUTE")
		path := batchtest.WritePayroll(t, h.Dir, "mute.csv", rows)
		service := &batchtest.HookedService{Client: h.Client, BeforeGet: func(string) error {
			return &api.Error{Op: "get payout", HTTPStatus: 502, Kind: api.KindRetryable}
		}}
		res := h.Run(ctx, path, func(c *batch.Config) {
			c.Service = service
			batchtest.FailAfterProviders(h, sandbox.Faults{FailAfterCreateRate: 1})(c)
		})
		if res.ExitCode != exitcode.Attention || res.Failed != 0 || res.Unknown != len(rows) {
			t.Fatalf("result %+v, want exit 4 with every row UNKNOWN", res)
		}
		for _, r := range rows {
			if p, err := h.DB.Get(ctx, r.Ref); err != nil || p.State != ledger.Unknown {
				t.Errorf("%s: %+v (%v), want UNKNOWN", r.Ref, p, err)
			}
		}
	})
}
