package reconcile_test

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/time/rate"

	"github.com/payout/payout/api"
	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/reconcile"
	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/batch/runid"
	"github.com/payout/payout/batch/words"
	"github.com/payout/payout/ledger"
)

const reconToken = "recon-token-0123456789"

// reconBench is a sandbox whose payouts stay PENDING until Settle, where accounts ending in 000
// fail; a client; a ledger; and a runner configuration that pays and reconciles through them.
type reconBench struct {
	tb      testing.TB
	sandbox *sandbox.Server
	// clock is the time of the sandbox and of the runs, a jumping one (batchtest.NewJumpingClock):
	// no wait is real. Payouts stay PENDING until a test moves it past SettleAfter, which no
	// run's waits add up to.
	clock  *batchtest.Clock
	client *api.Client
	db     *ledger.DB
	dir    string
	cfg    batch.Config
}

// newReconBench pays and reconciles at the run tests' production-like settings (see batchtest.Rate), with
// 4 workers, in the time of its clock; the sandbox's latency is added to faults unless they set their own.
func newReconBench(tb testing.TB, faults sandbox.Faults) *reconBench {
	tb.Helper()
	if faults.Latency == 0 && faults.LatencyJitter == 0 {
		faults.Latency, faults.LatencyJitter = batchtest.Latency, batchtest.LatencyJitter
	}
	clock := batchtest.NewJumpingClock(time.Now())
	sb := sandbox.New(sandbox.Options{AuthToken: reconToken, HashKey: []byte("recon-hash-key-0123456789"), Seed: 11,
		Now: clock.Now, After: clock.After, SettleAfter: time.Hour, SettleInterval: -1, FailSuffixes: sandbox.DefaultFailSuffixes, Faults: faults})
	ts := httptest.NewServer(sb)
	tb.Cleanup(func() {
		ts.Close()
		sb.Close()
	})
	client, err := api.NewClient(api.Config{BaseURL: ts.URL, AuthToken: reconToken, Timeout: 5 * time.Second, MaxConns: 8})
	if err != nil {
		tb.Fatal(err)
	}
	dir := tb.TempDir()
	db := batchtest.CreateLedger(tb, filepath.Join(dir, "ledger.db"), ledger.Options{Logger: slog.New(slog.DiscardHandler)})
	return &reconBench{tb: tb, sandbox: sb, clock: clock, client: client, db: db, dir: dir, cfg: batch.Config{
		Ledger: db, Service: client, Clock: clock, Limiter: batchtest.NewLimiter(clock, batchtest.Rate, 1), Workers: 4,
		VirtualPoolRef: "POOL-1", CallbackURL: "http://127.0.0.1:1/callback", RedirectURL: "http://127.0.0.1:1/return",
		ReportDir:    filepath.Join(dir, "reports"),
		UnknownGrace: 20 * time.Millisecond, NotFoundLookups: 3,
		BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond,
	}}
}

// settle makes every payout created so far final at the service.
func (b *reconBench) settle() {
	b.clock.Advance(2 * time.Hour)
	b.sandbox.Settle()
}

func (b *reconBench) runner(edit func(*batch.Config)) *batch.Runner {
	cfg := b.cfg
	if edit != nil {
		edit(&cfg)
	}
	return batch.NewRunner(cfg)
}

// pay runs a file of rows (ref, account, amount) and returns its run.
func (b *reconBench) pay(name string, rows [][3]string, edit func(*batch.Config)) batch.Result {
	b.tb.Helper()
	var sb strings.Builder
	sb.WriteString("external_invoice_ref,recipient_reference,bank,third_party_account_no,amount\n")
	for i, r := range rows {
		fmt.Fprintf(&sb, "%s,Employee %d,Maybank,%s,%s\n", r[0], i+1, r[1], r[2])
	}
	path := filepath.Join(b.dir, name)
	if err := os.WriteFile(path, []byte(sb.String()), 0o600); err != nil {
		b.tb.Fatal(err)
	}
	res, err := b.runner(edit).Run(context.Background(), path)
	if err != nil {
		b.tb.Fatalf("run %s: %v", name, err)
	}
	return res
}

func (b *reconBench) reconcile(opts reconcile.Options) reconcile.Result {
	b.tb.Helper()
	res, err := reconcile.Run(context.Background(), b.runner(nil).Config(), opts)
	if err != nil {
		b.tb.Fatalf("reconcile: %v", err)
	}
	if res.Payouts != res.Succeeded+res.Failed+res.Pending+res.Unknown+res.NotSent+res.Rejected {
		b.tb.Errorf("reconcile counts do not add up: %+v", res)
	}
	return res
}

// record puts a payout in the ledger as a run would have left it: recorded READY, then moved
// along states.
func (b *reconBench) record(ref, account, amount string, states ...ledger.State) {
	b.tb.Helper()
	ctx := context.Background()
	runID := runid.New(time.Now())
	if err := b.db.AddRun(ctx, ledger.Run{ID: runID, Kind: "run", File: ref + ".csv", StartedAt: time.Now(), Status: "running"}); err != nil {
		b.tb.Fatal(err)
	}
	p := ledger.Payout{Ref: ref, RunID: runID, Line: 2, Recipient: "Manual " + ref, ProviderID: b.maybank(), Bank: "Maybank",
		Account: account, Amount: decimal.RequireFromString(amount), State: ledger.Ready}
	rr := ledger.RunRow{Line: 2, Ref: ref, Recipient: p.Recipient, ProviderID: p.ProviderID, Bank: p.Bank, Account: account, Amount: amount}
	if err := b.db.Record(ctx, runID, []ledger.RunRow{rr}, []ledger.Payout{p}); err != nil {
		b.tb.Fatal(err)
	}
	from := ledger.Ready
	for _, to := range states {
		ch := ledger.Change{Ref: ref, From: from, To: to, RunID: runID, Detail: "test setup", CountAttempt: to == ledger.Submitting}
		if to == ledger.Submitted || to == ledger.Succeeded {
			if inv := b.invoice(ref); inv != "" {
				ch.InvoiceNo = inv
			}
		}
		if err := b.db.Apply(ctx, ch); err != nil {
			b.tb.Fatalf("setup %s %s→%s: %v", ref, from, to, err)
		}
		from = to
	}
	if err := b.db.FinishRun(ctx, runID, "finished", exitcode.OK, time.Now()); err != nil {
		b.tb.Fatal(err)
	}
}

func (b *reconBench) maybank() int64 {
	b.tb.Helper()
	providers, err := b.client.ListProviders(context.Background())
	if err != nil {
		b.tb.Fatal(err)
	}
	for _, p := range providers {
		if strings.HasPrefix(p.Name, "Maybank") {
			return p.ID
		}
	}
	b.tb.Fatalf("no Maybank among %v", providers)
	return 0
}

// invoice is the sandbox's invoice number for ref, or "".
func (b *reconBench) invoice(ref string) string {
	for _, rec := range b.sandbox.Payouts() {
		if rec.ExternalInvoiceRef == ref {
			return rec.InvoiceNo
		}
	}
	return ""
}

// create makes a payout at the service directly, as another process (or a lost response) would.
func (b *reconBench) create(ref, account, amount string) (api.CreateResult, error) {
	b.tb.Helper()
	return b.client.CreatePayout(context.Background(), api.CreatePayoutRequest{
		VirtualPoolReference: "POOL-1", PayoutServiceID: b.maybank(), Amount: decimal.RequireFromString(amount),
		ClientRedirectURL: "http://127.0.0.1:1/return", ClientCallbackURL: "http://127.0.0.1:1/callback",
		ThirdPartyAccountNo: account, RecipientReference: "Manual " + ref, PaymentDescription: "test", ExternalInvoiceRef: ref,
	})
}

func (b *reconBench) state(ref string) ledger.Payout {
	b.tb.Helper()
	p, err := b.db.Get(context.Background(), ref)
	if err != nil {
		b.tb.Fatalf("ledger %s: %v", ref, err)
	}
	return p
}

// reconCSV reads a reconciliation's CSV report by ref, and checks that it ties out: the rows'
// amounts add up to want, and to succeeded + failed + pending + rejected.
func reconCSV(tb testing.TB, res reconcile.Result, wantRows int, want decimal.Decimal) map[string]map[string]string {
	tb.Helper()
	var path string
	for _, p := range res.Reports {
		if strings.HasSuffix(p, ".csv") {
			path = p
		}
	}
	if !strings.Contains(filepath.Base(path), res.RunID) {
		tb.Fatalf("no CSV report of %s among %v", res.RunID, res.Reports)
	}
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		tb.Fatal(err)
	}
	if strings.Join(records[0], ",") != strings.Join(report.ReconHeader, ",") {
		tb.Fatalf("header %v, want %v", records[0], report.ReconHeader)
	}
	byRef := make(map[string]map[string]string)
	groups := map[string]decimal.Decimal{}
	total := decimal.Zero
	for _, rec := range records[1:] {
		row := make(map[string]string)
		for i, name := range records[0] {
			row[name] = rec[i]
		}
		byRef[row["external_invoice_ref"]] = row
		amount, err := decimal.NewFromString(row["ledger_amount"])
		if err != nil {
			continue // an amount that is no number is shown as written and counted apart
		}
		total = total.Add(amount)
		group := "pending"
		switch row["ledger_state"] {
		case "SUCCEEDED", "FAILED", "REJECTED":
			group = row["ledger_state"]
		}
		groups[group] = groups[group].Add(amount)
	}
	if len(records)-1 != wantRows {
		tb.Errorf("report has %d rows, want %d", len(records)-1, wantRows)
	}
	sum := groups["SUCCEEDED"].Add(groups["FAILED"]).Add(groups["pending"]).Add(groups["REJECTED"])
	if !total.Equal(want) || !sum.Equal(want) || !res.TotalAmount.Equal(want) {
		tb.Errorf("report total %s, groups %s, result %s: want all %s", total, sum, res.TotalAmount, want)
	}
	return byRef
}

func TestReconcileSettlesARun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		rows       [][3]string
		succeeded  int
		failed     int
		rejected   int // rows with "x" in the amount, paid around with --allow-partial
		firstExit  int
		secondExit int
	}{
		{
			name: "failures by account",
			rows: [][3]string{
				{"SET-1", "1234567001", "1500.00"}, {"SET-2", "1234567000", "2500.50"}, {"SET-3", "1234568000", "99.99"},
				{"SET-4", "1234567004", "10.01"}, {"SET-5", "1234567005", "700.00"},
			},
			succeeded: 3, failed: 2, firstExit: exitcode.Attention, secondExit: exitcode.Attention,
		},
		{
			name:      "all succeed",
			rows:      [][3]string{{"ALL-1", "5550001", "100.00"}, {"ALL-2", "5550002", "200.00"}},
			succeeded: 2, firstExit: exitcode.OK, secondExit: exitcode.OK,
		},
		{
			name:      "a rejected row",
			rows:      [][3]string{{"REJ-1", "6660001", "100.00"}, {"REJ-2", "6660002", "12.345x"}, {"REJ-3", "6660003", "300.00"}},
			succeeded: 2, rejected: 1, firstExit: exitcode.Attention, secondExit: exitcode.Attention,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newReconBench(t, sandbox.Faults{})
			run := b.pay("payroll.csv", tt.rows, func(c *batch.Config) { c.AllowPartial = true })
			sent := len(tt.rows) - tt.rejected
			if run.Pending != sent || run.Rejected != tt.rejected {
				t.Fatalf("run %+v, want every valid row accepted and pending", run)
			}
			total := decimal.Zero // an amount that is not a number counts as zero, as in the run's report
			for _, r := range tt.rows {
				if amount, err := decimal.NewFromString(r[2]); err == nil {
					total = total.Add(amount)
				}
			}
			b.settle()

			res := b.reconcile(reconcile.Options{RunID: run.RunID})
			if res.Succeeded != tt.succeeded || res.Failed != tt.failed || res.Rejected != tt.rejected || res.Pending != 0 ||
				res.Mismatches != 0 || res.Changed != sent || res.LookedUp != sent || res.ExitCode != tt.firstExit {
				t.Fatalf("reconcile %+v, want %d succeeded, %d failed, every row changed, exit %d", res, tt.succeeded, tt.failed, tt.firstExit)
			}
			byRef := reconCSV(t, res, len(tt.rows), total)
			for _, r := range tt.rows {
				want := "SUCCEEDED"
				row := byRef[r[0]]
				if strings.HasSuffix(r[2], "x") {
					if row["ledger_state"] != "REJECTED" || !strings.Contains(row["message"], "amount") {
						t.Errorf("%s: report row %v, want REJECTED with the reason", r[0], row)
					}
					continue
				}
				if strings.HasSuffix(r[1], "000") {
					want = "FAILED"
				}
				status := map[string]string{"SUCCEEDED": api.StatusSuccess, "FAILED": api.StatusFailed}[want]
				if row["ledger_state"] != want || row["service_status"] != status || row["mismatches"] != "" ||
					row["payout_invoice_no"] == "" || row["run_id"] != run.RunID {
					t.Errorf("%s: report row %v, want %s / %s with no mismatch", r[0], row, want, status)
				}
				if got := b.state(r[0]).State; string(got) != want {
					t.Errorf("%s: ledger state %s, want %s", r[0], got, want)
				}
			}

			recRun, err := b.db.GetRun(context.Background(), res.RunID)
			if err != nil || recRun.Kind != "reconcile" || recRun.Status != "finished" || recRun.ExitCode != res.ExitCode {
				t.Errorf("ledger run %+v (%v), want a finished reconcile run with exit %d", recRun, err, res.ExitCode)
			}
			events, err := b.db.Events(context.Background(), tt.rows[0][0])
			if err != nil {
				t.Fatal(err)
			}
			if last := events[len(events)-1]; last.RunID != res.RunID || last.To != ledger.Succeeded {
				t.Errorf("last event %+v, want the move to SUCCEEDED under reconcile run %s", last, res.RunID)
			}

			// Nothing changed since: a second reconciliation finds every row final and matching.
			again := b.reconcile(reconcile.Options{RunID: run.RunID})
			if again.Changed != 0 || again.Mismatches != 0 || again.Succeeded != tt.succeeded || again.Failed != tt.failed ||
				again.Rejected != tt.rejected || again.ExitCode != tt.secondExit {
				t.Fatalf("second reconcile %+v, want nothing changed and exit %d", again, tt.secondExit)
			}
			reconCSV(t, again, len(tt.rows), total)
			if n := b.sandbox.Stats().Creates; n != sent {
				t.Errorf("the service received %d creates, want %d: reconcile must never send", n, sent)
			}
		})
	}
}

func TestReconcileResolvesUnknownOutcomes(t *testing.T) {
	t.Parallel()
	b := newReconBench(t, sandbox.Faults{})
	// Payouts the service accepted: they prove that a lookup by reference finds what exists.
	if run := b.pay("known.csv", [][3]string{{"KNOWN-1", "7770001", "10.00"}, {"KNOWN-2", "7770002", "20.00"}}, nil); run.ExitCode != exitcode.OK {
		t.Fatalf("setup run %+v", run)
	}

	// Created at the service, but the answers were lost: one process died before recording the
	// answer (SUBMITTING), the other recorded it as UNKNOWN.
	lost := []struct{ ref, account, amount string }{{"LOST-1", "6660001", "300.00"}, {"LOST-2", "6660002", "400.00"}}
	b.record(lost[0].ref, lost[0].account, lost[0].amount, ledger.Submitting)
	b.record(lost[1].ref, lost[1].account, lost[1].amount, ledger.Submitting, ledger.Unknown)
	b.sandbox.SetFaults(sandbox.Faults{LostResponseRate: 1})
	for _, l := range lost {
		if _, err := b.create(l.ref, l.account, l.amount); api.KindOf(err) != api.KindOutcomeUnknown {
			t.Fatalf("create %s with its answer lost: %v, want an unknown outcome", l.ref, err)
		}
	}
	b.sandbox.SetFaults(sandbox.Faults{})

	// Never created: the requests died before reaching the service, and the process with them.
	never := [][3]string{{"NEVER-1", "5550011", "50.00"}, {"NEVER-2", "5550012", "60.00"}}
	for _, r := range never {
		b.record(r[0], r[1], r[2], ledger.Submitting, ledger.Unknown)
	}
	b.settle()
	createsBefore := b.sandbox.Stats().Creates

	res := b.reconcile(reconcile.Options{})
	if b.sandbox.Stats().Creates != createsBefore {
		t.Fatalf("reconcile sent %d creates, want none", b.sandbox.Stats().Creates-createsBefore)
	}
	for _, ref := range []string{"LOST-1", "LOST-2"} {
		if p := b.state(ref); p.State != ledger.Succeeded || p.InvoiceNo == "" || p.InvoiceNo != b.invoice(ref) {
			t.Errorf("%s: %s invoice %q, want SUCCEEDED with the service's invoice %q", ref, p.State, p.InvoiceNo, b.invoice(ref))
		}
	}
	for _, r := range never {
		p := b.state(r[0])
		if p.State != ledger.Ready {
			t.Errorf("%s: %s, want READY (never created, left for the next run)", r[0], p.State)
		}
		events, err := b.db.Events(context.Background(), r[0])
		if err != nil {
			t.Fatal(err)
		}
		if last := events[len(events)-1]; last.To != ledger.Ready || !strings.Contains(last.Detail, "the next run of its file sends it") || last.RunID != res.RunID {
			t.Errorf("%s: last event %+v, want the move to READY by reconcile", r[0], last)
		}
	}
	if res.ToResend != len(never) || res.NotSent != len(never) || res.ExitCode != exitcode.Attention || res.Mismatches != 0 {
		t.Fatalf("reconcile %+v, want %d to resend and exit 4", res, len(never))
	}
	// KNOWN rows were settled too: the unscoped reconciliation covers what is not final.
	if res.Payouts != 6 || res.Succeeded != 4 {
		t.Errorf("reconcile %+v, want 6 payouts of which 4 succeeded", res)
	}

	// The next run of the file sends them, once each.
	rerun := b.pay("never.csv", never, nil)
	if rerun.ExitCode != exitcode.OK {
		t.Fatalf("rerun %+v, want exit 0", rerun)
	}
	counts := b.sandbox.CreateCounts()
	for _, ref := range []string{"NEVER-1", "NEVER-2", "LOST-1", "LOST-2", "KNOWN-1"} {
		if counts[ref] != 1 {
			t.Errorf("%s created %d times, want exactly once", ref, counts[ref])
		}
	}
}

func TestReconcileFlagsMismatches(t *testing.T) {
	t.Parallel()
	b := newReconBench(t, sandbox.Faults{})
	since := time.Now().Add(-time.Minute)
	file := [][3]string{{"FILE-1", "3330001", "100.00"}, {"FILE-2", "3330002", "200.00"}}
	if run := b.pay("file.csv", file, nil); run.ExitCode != exitcode.OK {
		t.Fatalf("setup run %+v", run)
	}
	// Another payout with the same reference and another amount was created at the service.
	if _, err := b.create("AMOUNT-1", "3330003", "350.00"); err != nil {
		t.Fatal(err)
	}
	b.record("AMOUNT-1", "3330003", "300.00", ledger.Submitting, ledger.Submitted)
	// The service paid another account under this reference.
	if _, err := b.create("ACCOUNT-1", "3339999", "40.00"); err != nil {
		t.Fatal(err)
	}
	b.record("ACCOUNT-1", "3330004", "40.00", ledger.Submitting, ledger.Submitted)
	// Accepted, says the ledger; the service has never heard of it.
	b.record("GHOST-1", "3330005", "55.00", ledger.Submitting, ledger.Submitted)
	// The ledger says it succeeded; the service says it failed (accounts ending in 000 fail).
	if _, err := b.create("FINAL-1", "3331000", "70.00"); err != nil {
		t.Fatal(err)
	}
	b.settle()
	b.record("FINAL-1", "3331000", "70.00", ledger.Submitting, ledger.Submitted, ledger.Succeeded)

	res := b.reconcile(reconcile.Options{Since: since})
	want := decimal.RequireFromString("765.00") // 100 + 200 + 300 + 40 + 55 + 70: the ledger's amounts
	byRef := reconCSV(t, res, 6, want)
	tests := []struct {
		ref, state, mismatch string
	}{
		{"FILE-1", "SUCCEEDED", ""},
		{"FILE-2", "SUCCEEDED", ""},
		{"AMOUNT-1", "SUCCEEDED", words.MismatchAmount},
		{"ACCOUNT-1", "SUCCEEDED", words.MismatchAccount},
		{"GHOST-1", "SUBMITTED", words.MismatchUnknown},
		{"FINAL-1", "SUCCEEDED", words.MismatchFinalChanged},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			row := byRef[tt.ref]
			if row["ledger_state"] != tt.state || row["mismatches"] != tt.mismatch {
				t.Errorf("report row %v, want %s flagged %q", row, tt.state, tt.mismatch)
			}
			if p := b.state(tt.ref); string(p.State) != tt.state {
				t.Errorf("ledger state %s, want %s", p.State, tt.state)
			}
		})
	}
	if got := byRef["AMOUNT-1"]; got["ledger_amount"] != "300.00" || got["service_amount"] != "350.00" {
		t.Errorf("amount row %v, want ledger 300.00 against service 350.00", got)
	}
	events, err := b.db.Events(context.Background(), "FINAL-1")
	if err != nil {
		t.Fatal(err)
	}
	if last := events[len(events)-1]; last.To != ledger.Succeeded || !strings.Contains(last.Detail, "FAILED") || last.RunID != res.RunID {
		t.Errorf("FINAL-1's last event %+v, want the service's FAILED recorded without overwriting SUCCEEDED", last)
	}
	if res.Mismatches != 4 || res.ExitCode != exitcode.Attention {
		t.Errorf("reconcile %+v, want 4 mismatches and exit 4", res)
	}
}

func TestReconcileServiceDown(t *testing.T) {
	t.Parallel()
	b := newReconBench(t, sandbox.Faults{})
	run := b.pay("down.csv", [][3]string{{"DOWN-1", "4440001", "10.00"}, {"DOWN-2", "4440002", "20.00"}}, nil)
	if run.ExitCode != exitcode.OK {
		t.Fatalf("setup run %+v", run)
	}
	b.sandbox.SetDown(true)
	runner := b.runner(func(c *batch.Config) { c.BreakerThreshold = 3; c.MaxLookupErrors = 100 })
	res, err := reconcile.Run(context.Background(), runner.Config(), reconcile.Options{RunID: run.RunID})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != exitcode.Aborted || res.Aborted == "" || res.NotChecked != 2 || res.Pending != 2 {
		t.Fatalf("reconcile %+v, want exit 1 with both rows pending and not checked", res)
	}
	reconCSV(t, res, 2, decimal.RequireFromString("30.00"))
	recRun, err := b.db.GetRun(context.Background(), res.RunID)
	if err != nil || recRun.Status != "aborted" || recRun.ExitCode != exitcode.Aborted {
		t.Errorf("ledger run %+v (%v), want an aborted reconcile run", recRun, err)
	}
}

func TestReconcileLookupsThatNeverAnswer(t *testing.T) {
	t.Parallel()
	b := newReconBench(t, sandbox.Faults{})
	run := b.pay("mute.csv", [][3]string{{"MUTE-1", "1110001", "10.00"}, {"MUTE-2", "1110002", "20.00"}}, nil)
	if run.ExitCode != exitcode.OK {
		t.Fatalf("setup run %+v", run)
	}
	b.settle()
	service := &batchtest.HookedService{Client: b.client, BeforeGet: func(ref string) error {
		if ref == "MUTE-1" {
			return &api.Error{Op: "get payout", HTTPStatus: 502, Kind: api.KindRetryable}
		}
		return nil
	}}
	runner := b.runner(func(c *batch.Config) { c.Service = service; c.MaxLookupErrors = 3; c.BreakerThreshold = 100 })
	res, err := reconcile.Run(context.Background(), runner.Config(), reconcile.Options{RunID: run.RunID})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != exitcode.Aborted || res.NotChecked != 1 || res.Succeeded != 1 || res.Pending != 1 {
		t.Fatalf("reconcile %+v, want exit 1 with MUTE-1 not checked and MUTE-2 settled", res)
	}
	byRef := reconCSV(t, res, 2, decimal.RequireFromString("30.00"))
	if row := byRef["MUTE-1"]; row["mismatches"] != "not checked" || !strings.Contains(row["message"], "did not answer") {
		t.Errorf("MUTE-1's report row %v, want it flagged not checked", row)
	}
}

func TestReconcileScopeErrors(t *testing.T) {
	t.Parallel()
	b := newReconBench(t, sandbox.Faults{})
	first := b.reconcile(reconcile.Options{})
	if first.ExitCode != exitcode.OK || first.Payouts != 0 {
		t.Fatalf("reconcile of an empty ledger %+v, want exit 0 and nothing", first)
	}
	tests := []struct {
		name string
		opts reconcile.Options
		want error
	}{
		{"unknown run", reconcile.Options{RunID: "20260101T000000Z-0000"}, ledger.ErrNotFound},
		{"run and date", reconcile.Options{RunID: "x", Since: time.Now()}, reconcile.ErrScope},
		{"a reconciliation's run", reconcile.Options{RunID: first.RunID}, reconcile.ErrScope},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := reconcile.Run(context.Background(), b.runner(nil).Config(), tt.opts)
			if !errors.Is(err, tt.want) {
				t.Fatalf("reconcile: %v, want %v", err, tt.want)
			}
		})
	}
	runs, err := b.db.FindRuns(context.Background(), ledger.RunFilter{})
	if err != nil || len(runs) != 1 {
		t.Errorf("runs %v (%v): a refused reconciliation must record nothing", runs, err)
	}
}

func TestReconcileRowMovedByACallback(t *testing.T) {
	t.Parallel()
	b := newReconBench(t, sandbox.Faults{})
	run := b.pay("callback.csv", [][3]string{{"CB-1", "2220001", "10.00"}, {"CB-2", "2220002", "20.00"}}, nil)
	if run.ExitCode != exitcode.OK {
		t.Fatalf("setup run %+v", run)
	}
	b.settle()
	// `payout callbacks` holds no run lock: it moves CB-1 to SUCCEEDED while reconcile looks it up.
	var fired atomic.Bool
	service := &batchtest.HookedService{Client: b.client, BeforeGet: func(ref string) error {
		if ref != "CB-1" || !fired.CompareAndSwap(false, true) {
			return nil
		}
		err := b.db.Apply(context.Background(), ledger.Change{Ref: ref, From: ledger.Submitted, To: ledger.Succeeded,
			TransactionStatus: api.StatusSuccess, Detail: "callback: SUCCESS"})
		if err != nil {
			t.Errorf("callback: %v", err)
		}
		return nil
	}}
	res, err := reconcile.Run(context.Background(), b.runner(func(c *batch.Config) { c.Service = service }).Config(), reconcile.Options{RunID: run.RunID})
	if err != nil {
		t.Fatal(err)
	}
	if !fired.Load() || res.ExitCode != exitcode.OK || res.Succeeded != 2 || res.Mismatches != 0 {
		t.Fatalf("reconcile %+v (callback fired: %v), want both SUCCEEDED and exit 0", res, fired.Load())
	}
}

// BenchmarkReconcile measures a scoped reconciliation of a settled 500-row file: one lookup per
// row, no rate limit, 4 workers, every row already final (no ledger writes but the run's own).
func BenchmarkReconcile(b *testing.B) {
	bench := newReconBench(b, sandbox.Faults{})
	bench.cfg.Clock, bench.cfg.Limiter = nil, rate.NewLimiter(rate.Inf, 1) // timed: the system's timers
	bench.sandbox.SetFaults(sandbox.Faults{})
	rows := make([][3]string, 500)
	for i := range rows {
		rows[i] = [3]string{fmt.Sprintf("BENCH-%04d", i), fmt.Sprintf("90%08d", i+1), "12.34"}
	}
	run := bench.pay("bench.csv", rows, nil)
	bench.settle()
	if res := bench.reconcile(reconcile.Options{RunID: run.RunID}); res.Succeeded != len(rows) {
		b.Fatalf("first reconcile %+v", res)
	}
	for b.Loop() {
		if res := bench.reconcile(reconcile.Options{RunID: run.RunID}); res.ExitCode != exitcode.OK {
			b.Fatalf("reconcile %+v", res)
		}
	}
	b.ReportMetric(float64(len(rows)*b.N)/b.Elapsed().Seconds(), "rows/s")
}

func TestReconcileStopsWhenTheServiceKeepsThrottling(t *testing.T) {
	t.Parallel()
	b := newReconBench(t, sandbox.Faults{})
	run := b.pay("throttled.csv", [][3]string{{"THR-1", "5550001", "10.00"}, {"THR-2", "5550002", "20.00"}, {"THR-3", "5550003", "30.00"}}, nil)
	if run.ExitCode != exitcode.OK {
		t.Fatalf("setup run %+v", run)
	}
	// Every lookup is a 429 with "Retry-After: 0": nothing but the bounds stops the retries.
	b.sandbox.SetFaults(sandbox.Faults{ThrottleLookups: 1})
	before := b.sandbox.Stats().Requests["get"]
	res := b.reconcile(reconcile.Options{RunID: run.RunID})
	want := "the service is throttling lookups (HTTP 429): 3 payouts not checked; run reconcile again later"
	if res.ExitCode != exitcode.Aborted || res.Aborted != want || res.NotChecked != 3 || res.Pending != 3 {
		t.Fatalf("reconcile %+v, want exit 1, every payout pending and not checked, and %q", res, want)
	}
	if gets := b.sandbox.Stats().Requests["get"] - before; gets > 30+b.cfg.Workers {
		t.Errorf("%d lookups against a service that throttles them all, want the breaker to stop them after 30 or so", gets)
	}
	reconCSV(t, res, 3, decimal.RequireFromString("60.00"))
}

// TestReconcileRechecksRecentRefusals: a row left FAILED by a refusal that no lookup confirmed
// (as runs used to leave them) is looked up by reconcile; if the service holds it after all, it
// takes the state found, with an event.
func TestReconcileRechecksRecentRefusals(t *testing.T) {
	t.Parallel()
	b := newReconBench(t, sandbox.Faults{})
	b.record("REF-MADE", "6660001", "10.00", ledger.Submitting, ledger.Unknown, ledger.Failed)
	b.record("REF-NONE", "6660002", "20.00", ledger.Submitting, ledger.Unknown, ledger.Failed)
	if _, err := b.create("REF-MADE", "6660001", "10.00"); err != nil {
		t.Fatal(err)
	}
	eightDaysOn := func(c *batch.Config) { c.Clock = batchtest.NewJumpingClock(time.Now().Add(8 * 24 * time.Hour)) }
	old, err := reconcile.Run(context.Background(), b.runner(eightDaysOn).Config(), reconcile.Options{FailedWithin: 7 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if old.LookedUp != 0 || b.state("REF-MADE").State != ledger.Failed {
		t.Fatalf("reconcile %+v looked up refusals older than --failed-within", old)
	}

	b.settle()
	res := b.reconcile(reconcile.Options{FailedWithin: 7 * 24 * time.Hour})
	if res.LookedUp != 2 || res.Changed != 1 || res.Succeeded != 1 || res.Failed != 1 || res.ExitCode != exitcode.OK {
		t.Fatalf("reconcile %+v, want both refusals looked up, REF-MADE found, and exit 0: REF-NONE is still refused, as reported when it failed", res)
	}
	made := b.state("REF-MADE")
	if made.State != ledger.Succeeded || made.InvoiceNo != b.invoice("REF-MADE") {
		t.Errorf("REF-MADE %+v, want SUCCEEDED with the service's invoice number", made)
	}
	events, err := b.db.Events(context.Background(), "REF-MADE")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ev := range events {
		if ev.From == ledger.Failed && ev.To == ledger.Submitted && strings.Contains(ev.Detail, "refused when it was sent, but the service holds it") {
			found = true
		}
	}
	if !found {
		t.Errorf("events of REF-MADE %+v, want FAILED → SUBMITTED, saying why", events)
	}
	if none := b.state("REF-NONE"); none.State != ledger.Failed || !outcome.FailureConfirmed(none) {
		t.Errorf("REF-NONE %+v, want FAILED with its refusal now confirmed", none)
	}
}

// TestReconcileSaysHowToFreeAStuckRow: reconcile never makes a stuck row READY, and its report
// says how to free it.
func TestReconcileSaysHowToFreeAStuckRow(t *testing.T) {
	t.Parallel()
	b := newReconBench(t, sandbox.Faults{})
	var states []ledger.State
	for i := 0; i < outcome.MaxSendAttempts; i++ {
		if i > 0 {
			states = append(states, ledger.Ready)
		}
		states = append(states, ledger.Submitting, ledger.Unknown)
	}
	b.record("STUCK-1", "4440001", "70.00", states...)
	if p := b.state("STUCK-1"); !outcome.Stuck(p) {
		t.Fatalf("setup: %+v is not stuck", p)
	}
	res := b.reconcile(reconcile.Options{})
	if res.ToResend != 0 || res.Unknown != 1 || res.ExitCode != exitcode.Attention {
		t.Errorf("reconcile %+v, want the stuck row kept UNKNOWN", res)
	}
	row := reconCSV(t, res, 1, decimal.RequireFromString("70.00"))["STUCK-1"]
	if want := outcome.StuckMessage("STUCK-1", outcome.MaxSendAttempts); !strings.Contains(row["message"], want) {
		t.Errorf("report message %q, want %q in it", row["message"], want)
	}
	if p := b.state("STUCK-1"); p.State != ledger.Unknown {
		t.Errorf("after reconcile: %s", p.State)
	}
}
