package batch_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/xuri/excelize/v2"
	"golang.org/x/time/rate"

	"github.com/payout/payout/api"
	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/ledger"
)

const (
	testToken   = "test-token-0123456789"
	testHashKey = "test-hash-key-0123456789"
)

// harness is a sandbox on loopback, a client, a ledger file and a runner configuration.
type harness struct {
	tb      testing.TB
	sandbox *sandbox.Server
	server  *httptest.Server
	client  *api.Client
	db      *ledger.DB
	dir     string
	cfg     batch.Config
	// latency and jitter are the sandbox's when the harness was made.
	latency, jitter time.Duration
}

// The end-to-end run tests pay at settings users run with: a limiter of testRate a second with a
// burst of 1, testWorkers workers, and a sandbox that answers in 5-20 ms. A test of many rows keeps
// rows/testRate to a second or so. TestRunUnthrottled is the one short run without either.
const (
	testRate          = 100
	testWorkers       = 8
	testLatency       = 5 * time.Millisecond
	testLatencyJitter = 15 * time.Millisecond
)

// newHarness is a harness at the production-like settings; the sandbox's latency is added to
// opts.Faults unless they set their own.
func newHarness(tb testing.TB, opts sandbox.Options) *harness {
	tb.Helper()
	if opts.Faults.Latency == 0 && opts.Faults.LatencyJitter == 0 {
		opts.Faults.Latency, opts.Faults.LatencyJitter = testLatency, testLatencyJitter
	}
	return buildHarness(tb, opts, rate.NewLimiter(testRate, 1), testWorkers)
}

// newUnthrottledHarness is a harness with no rate limit and a sandbox that answers at once, for
// the short unthrottled test and the throughput benchmark.
func newUnthrottledHarness(tb testing.TB, opts sandbox.Options, workers int) *harness {
	tb.Helper()
	opts.Faults.Latency, opts.Faults.LatencyJitter = 0, 0
	return buildHarness(tb, opts, rate.NewLimiter(rate.Inf, 1), workers)
}

func buildHarness(tb testing.TB, opts sandbox.Options, limiter *rate.Limiter, workers int) *harness {
	tb.Helper()
	opts.AuthToken, opts.HashKey = testToken, []byte(testHashKey)
	if opts.Seed == 0 {
		opts.Seed = 7
	}
	sb := sandbox.New(opts)
	ts := httptest.NewServer(sb)
	tb.Cleanup(func() {
		ts.Close()
		sb.Close()
	})
	client, err := api.NewClient(api.Config{BaseURL: ts.URL, AuthToken: testToken, Timeout: 5 * time.Second, MaxConns: workers})
	if err != nil {
		tb.Fatal(err)
	}
	dir := tb.TempDir()
	db := createLedger(tb, filepath.Join(dir, "ledger.db"))
	h := &harness{tb: tb, sandbox: sb, server: ts, client: client, db: db, dir: dir,
		latency: opts.Faults.Latency, jitter: opts.Faults.LatencyJitter}
	h.cfg = batch.Config{
		Ledger: db, Service: client, Limiter: limiter, Workers: workers,
		VirtualPoolRef: "POOL-1", CallbackURL: "http://127.0.0.1:1/callback", RedirectURL: "http://127.0.0.1:1/return",
		ReportDir:    filepath.Join(dir, "reports"),
		UnknownGrace: 30 * time.Millisecond, NotFoundLookups: 3,
		BackoffBase: time.Millisecond, BackoffMax: 10 * time.Millisecond,
	}
	return h
}

// setFaults turns faults on and keeps the harness's latency unless they set their own.
func (h *harness) setFaults(f sandbox.Faults) {
	if f.Latency == 0 && f.LatencyJitter == 0 {
		f.Latency, f.LatencyJitter = h.latency, h.jitter
	}
	h.sandbox.SetFaults(f)
}

// TestRunUnthrottled is the one short run with no rate limit, a sandbox that answers at once and
// 32 workers: every row is created exactly once although answers are lost at full concurrency.
func TestRunUnthrottled(t *testing.T) {
	h := newUnthrottledHarness(t, sandbox.Options{Faults: sandbox.Faults{LostResponseRate: 0.1}}, 32)
	rows := payroll(200, "UNTHROTTLED")
	res := h.run(context.Background(), writePayroll(t, h.dir, "unthrottled.csv", rows), nil)
	if res.ExitCode != batch.ExitOK || res.Submitted != len(rows) {
		t.Fatalf("result %+v, want exit 0 with %d submitted", res, len(rows))
	}
	h.assertExactlyOnce(rows, res)
	if st := h.sandbox.Stats(); st.Lost == 0 || st.Creates != len(rows) {
		t.Errorf("stats %+v, want some answers lost and %d creates", st, len(rows))
	}
}

// createLedger makes a new ledger at path, open for the test.
func createLedger(tb testing.TB, path string) *ledger.DB {
	tb.Helper()
	db, err := ledger.Create(context.Background(), path, ledger.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// run pays path with the harness's config, edited, and checks that the run's report says what
// `payout report` writes from the ledger.
func (h *harness) run(ctx context.Context, path string, edit func(*batch.Config)) batch.Result {
	h.tb.Helper()
	cfg := h.cfg
	if edit != nil {
		edit(&cfg)
	}
	res := h.pay(ctx, path, cfg)
	if !res.DryRun && cfg.Ledger != nil {
		h.sameReportFromLedger(cfg.Ledger, res)
	}
	return res
}

// pay is run without the check, for the benchmarks, which time it.
func (h *harness) pay(ctx context.Context, path string, cfg batch.Config) batch.Result {
	h.tb.Helper()
	res, err := batch.NewRunner(cfg).Run(ctx, path)
	if err != nil {
		h.tb.Fatalf("run %s: %v", path, err)
	}
	return res
}

// sameReportFromLedger checks that the run's result CSV, written at the end of the run, says
// what `payout report` writes from the ledger afterwards: both read the run with one query.
func (h *harness) sameReportFromLedger(db *ledger.DB, res batch.Result) {
	h.tb.Helper()
	written := resultCSV(h.tb, res)
	again, err := batch.WriteReports(context.Background(), db, res.RunID, h.tb.TempDir(), time.Now())
	if err != nil {
		h.tb.Fatal(err)
	}
	want, err := os.ReadFile(again.CSV)
	if err != nil {
		h.tb.Fatal(err)
	}
	got, err := os.ReadFile(written)
	if err != nil {
		h.tb.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		h.tb.Errorf("run %s: its CSV report differs from the one written from the ledger\nrun:\n%s\nledger:\n%s", res.RunID, got, want)
	}
}

// payrollRow is one row of a generated test file.
type payrollRow struct {
	ref, name, bank, account, amount string
}

func payroll(n int, prefix string) []payrollRow {
	banks := []string{"Maybank", "CIMB Bank Berhad", "Public Bank", "RHB Bank", "Hong Leong Bank"}
	rows := make([]payrollRow, n)
	for i := range rows {
		rows[i] = payrollRow{
			ref:     fmt.Sprintf("%s-%05d", prefix, i+1),
			name:    fmt.Sprintf("Employee %d", i+1),
			bank:    banks[i%len(banks)],
			account: fmt.Sprintf("0%09d1", 1000+i),
			amount:  fmt.Sprintf("%d.%02d", 1000+i, i%100),
		}
	}
	return rows
}

func writePayroll(tb testing.TB, dir, name string, rows []payrollRow) string {
	tb.Helper()
	var b strings.Builder
	b.WriteString("external_invoice_ref,recipient_reference,bank,third_party_account_no,amount,payment_description\r\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%s,%s,%s,%s,%s,Salary November\r\n", r.ref, r.name, r.bank, r.account, r.amount)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

func fileTotal(rows []payrollRow) decimal.Decimal {
	total := decimal.Zero
	for _, r := range rows {
		total = total.Add(decimal.RequireFromString(r.amount))
	}
	return total
}

// assertExactlyOnce checks, from the sandbox's own record, that every row was created exactly once,
// and that ledger, sandbox and the result report agree row by row and in totals.
func (h *harness) assertExactlyOnce(rows []payrollRow, res batch.Result) {
	h.tb.Helper()
	counts := h.sandbox.CreateCounts()
	for _, r := range rows {
		if counts[r.ref] != 1 {
			h.tb.Errorf("%s was created %d times by the service, want exactly 1", r.ref, counts[r.ref])
		}
	}
	if dups := h.sandbox.Duplicates(); len(dups) > 0 {
		h.tb.Errorf("paid twice: %v", dups)
	}
	records := make(map[string]sandbox.Record)
	for _, rec := range h.sandbox.Payouts() {
		records[rec.ExternalInvoiceRef] = rec
	}
	ctx := context.Background()
	for _, r := range rows {
		p, err := h.db.Get(ctx, r.ref)
		if err != nil {
			h.tb.Errorf("ledger lost %s: %v", r.ref, err)
			continue
		}
		if p.State != ledger.Submitted && p.State != ledger.Succeeded {
			h.tb.Errorf("%s: ledger state %s, want SUBMITTED or SUCCEEDED (last error %q)", r.ref, p.State, p.LastError)
		}
		rec := records[r.ref]
		if p.InvoiceNo != rec.InvoiceNo {
			h.tb.Errorf("%s: ledger invoice %q, service %q", r.ref, p.InvoiceNo, rec.InvoiceNo)
		}
		if !p.Amount.Equal(rec.Amount) || !p.Amount.Equal(decimal.RequireFromString(r.amount)) {
			h.tb.Errorf("%s: ledger amount %s, service %s, file %s", r.ref, p.Amount, rec.Amount, r.amount)
		}
	}
	h.assertReport(res, len(rows), fileTotal(rows))
}

// resultCSV is the path of the run's result CSV among its reports.
func resultCSV(tb testing.TB, res batch.Result) string {
	tb.Helper()
	for _, p := range res.Reports {
		if strings.HasSuffix(p, ".result.csv") {
			return p
		}
	}
	tb.Fatalf("run %s wrote no CSV report among %v", res.RunID, res.Reports)
	return ""
}

// assertReport reads the result CSV and checks it has a row per input row and ties out to the sen.
func (h *harness) assertReport(res batch.Result, wantRows int, wantTotal decimal.Decimal) map[string][]string {
	h.tb.Helper()
	if !res.TotalAmount.Equal(wantTotal) {
		h.tb.Errorf("result total %s, want %s", res.TotalAmount, wantTotal)
	}
	f, err := os.Open(resultCSV(h.tb, res))
	if err != nil {
		h.tb.Fatal(err)
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		h.tb.Fatal(err)
	}
	header := records[0]
	col := func(name string) int {
		for i, h := range header {
			if h == name {
				return i
			}
		}
		return -1
	}
	byRef := make(map[string][]string)
	total := decimal.Zero
	for _, rec := range records[1:] {
		byRef[rec[col("external_invoice_ref")]] = rec
		if amount, err := decimal.NewFromString(rec[col("amount")]); err == nil {
			total = total.Add(amount)
		}
	}
	if len(records)-1 != wantRows {
		h.tb.Errorf("report has %d rows, want %d", len(records)-1, wantRows)
	}
	if !total.Equal(wantTotal) {
		h.tb.Errorf("report rows add up to %s, want %s", total, wantTotal)
	}
	sumByState := res.Rejected + res.Succeeded + res.Pending + res.Failed + res.Unknown + res.NotSent
	if sumByState != res.Rows {
		h.tb.Errorf("counts by state add up to %d, want %d rows", sumByState, res.Rows)
	}
	return byRef
}

func TestRunHappyPath(t *testing.T) {
	h := newHarness(t, sandbox.Options{})
	rows := payroll(60, "HAPPY")
	path := writePayroll(t, h.dir, "november.csv", rows)
	res := h.run(context.Background(), path, nil)
	if res.ExitCode != batch.ExitOK || res.Submitted != len(rows) || res.Skipped != 0 {
		t.Fatalf("result %+v, want exit 0 with %d submitted", res, len(rows))
	}
	h.assertExactlyOnce(rows, res)
	for _, p := range res.Reports {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("report %s: %v", p, err)
		}
	}

	// A rerun of a finished file sends nothing and counts every row as skipped.
	before := h.sandbox.Stats()
	again := h.run(context.Background(), path, nil)
	if again.ExitCode != batch.ExitOK || again.Skipped != len(rows) || again.Submitted != 0 {
		t.Fatalf("rerun %+v, want exit 0 with every row skipped", again)
	}
	if after := h.sandbox.Stats(); after.Creates != before.Creates {
		t.Errorf("rerun sent %d creates, want none", after.Creates-before.Creates)
	}
	h.assertExactlyOnce(rows, again)
}

func TestRunFaults(t *testing.T) {
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
			h := newHarness(t, sandbox.Options{Faults: tt.faults})
			rows := payroll(80, "FAULT")
			path := writePayroll(t, h.dir, "faults.csv", rows)
			res := h.run(context.Background(), path, nil)
			if res.ExitCode != batch.ExitOK {
				t.Fatalf("result %+v, want exit 0", res)
			}
			h.assertExactlyOnce(rows, res)
		})
	}
}

func TestRunServiceDownThenRerun(t *testing.T) {
	h := newHarness(t, sandbox.Options{})
	rows := payroll(80, "DOWN")
	path := writePayroll(t, h.dir, "down.csv", rows)
	var downed atomic.Bool
	res := h.run(context.Background(), path, func(c *batch.Config) {
		c.BreakerThreshold = 5
		c.Workers = 2 // few rows in flight, so that the service goes down with most still to send
		c.Progress = func(done, total int) {
			if done >= 25 && downed.CompareAndSwap(false, true) {
				h.sandbox.SetDown(true)
			}
		}
	})
	if res.ExitCode != batch.ExitAborted {
		t.Fatalf("result %+v, want exit 1 while the service is down", res)
	}
	h.sandbox.SetDown(false)
	res = h.run(context.Background(), path, nil)
	if res.ExitCode != batch.ExitOK {
		t.Fatalf("rerun %+v, want exit 0", res)
	}
	h.assertExactlyOnce(rows, res)
}

func TestRunCancelThenResume(t *testing.T) {
	h := newHarness(t, sandbox.Options{Faults: sandbox.Faults{LostResponseRate: 0.1}})
	rows := payroll(80, "CANCEL")
	path := writePayroll(t, h.dir, "cancel.csv", rows)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res := h.run(ctx, path, func(c *batch.Config) {
		c.Workers = 2 // few rows in flight, so that the cancel stops it with most still to send
		c.Progress = func(done, total int) {
			if done >= 20 {
				cancel()
			}
		}
	})
	if res.ExitCode != batch.ExitAborted || res.Aborted == "" {
		t.Fatalf("result %+v, want exit 1 after cancel", res)
	}
	if created := len(h.sandbox.CreateCounts()); created >= len(rows) {
		t.Fatalf("cancel did not stop dispatching: %d of %d created", created, len(rows))
	}
	// A stop leaves no intent without its answer: rows whose request was not sent went back to
	// READY (so the rerun need not wait out a lookup's grace for them).
	if stuck, err := h.db.List(context.Background(), ledger.Filter{States: []ledger.State{ledger.Submitting}}); err != nil || len(stuck) > 0 {
		t.Fatalf("after a cancel %d rows are SUBMITTING (%v)", len(stuck), err)
	}
	// Every payout is recorded READY before anything is sent: the rows the run never reached are
	// READY with nothing but their "recorded" event, and the report has every row, the unsent ones
	// READY, with the file's total.
	byRef := h.assertReport(res, len(rows), fileTotal(rows))
	firstRun := res.RunID
	unsent := 0
	var unsentRef string
	var unsentLine int
	for i, r := range rows {
		p, err := h.db.Get(context.Background(), r.ref)
		if err != nil {
			t.Fatalf("%s not recorded by the run: %v", r.ref, err)
		}
		if p.State != ledger.Ready {
			continue
		}
		unsent++
		unsentRef, unsentLine = r.ref, i+2
		if evs, err := h.db.Events(context.Background(), r.ref); err != nil || len(evs) != 1 || p.Attempts != 0 {
			t.Errorf("%s, never sent: %d attempts, events %+v (%v)", r.ref, p.Attempts, evs, err)
		}
		if got := strings.Join(byRef[r.ref], ","); !strings.Contains(got, ",READY,") || !strings.Contains(got, "the run stopped before this row") {
			t.Errorf("report row of %s, never sent: %q", r.ref, got)
		}
	}
	if unsent == 0 || res.NotSent != unsent {
		t.Errorf("%d rows READY, %d not sent in the result %+v", unsent, res.NotSent, res)
	}
	res = h.run(context.Background(), path, nil)
	if res.ExitCode != batch.ExitOK {
		t.Fatalf("resume %+v, want exit 0", res)
	}
	h.assertExactlyOnce(rows, res)
	evs, err := h.db.Events(context.Background(), unsentRef)
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
	h := newHarness(t, sandbox.Options{})
	rows := payroll(5, "REUSE")
	res := h.run(context.Background(), writePayroll(t, h.dir, "first.csv", rows), nil)
	if res.ExitCode != batch.ExitOK {
		t.Fatalf("first run %+v", res)
	}
	changed := append([]payrollRow(nil), rows...)
	changed[2].amount = "99999.00"
	before := h.sandbox.Stats().Creates
	res = h.run(context.Background(), writePayroll(t, h.dir, "second.csv", changed), nil)
	if res.ExitCode != batch.ExitRejected || res.Rejected != 1 {
		t.Fatalf("second run %+v, want exit 3 with one row rejected", res)
	}
	if after := h.sandbox.Stats().Creates; after != before {
		t.Errorf("a rejected file sent %d creates", after-before)
	}
	byRef := h.assertReport(res, len(changed), fileTotal(changed))
	if got := strings.Join(byRef[changed[2].ref], ","); !strings.Contains(got, "REJECTED") || !strings.Contains(got, "ledger") {
		t.Errorf("reused reference's report row %q, want REJECTED naming the ledger", got)
	}
	p, err := h.db.Get(context.Background(), changed[2].ref)
	if err != nil || !p.Amount.Equal(decimal.RequireFromString(rows[2].amount)) {
		t.Errorf("ledger row overwritten: %+v, %v", p, err)
	}
}

// failAfterProviders turns faults on once the provider list has been read: Progress is first
// called just before dispatching starts.
func failAfterProviders(h *harness, faults sandbox.Faults) func(*batch.Config) {
	return func(c *batch.Config) {
		c.BreakerThreshold, c.MaxLookupErrors = 1000, 2
		var once atomic.Bool
		c.Progress = func(done, total int) {
			if once.CompareAndSwap(false, true) {
				h.setFaults(faults)
			}
		}
	}
}

func TestRunUnknownOutcomes(t *testing.T) {
	t.Run("not found after the grace is sent again exactly once", func(t *testing.T) {
		// Every request answers 503 before creating anything: each row becomes UNKNOWN and its
		// lookups fail too. Once the service is back, the rerun looks each up, finds it missing by
		// spaced lookups over the grace, and sends it again, once.
		h := newHarness(t, sandbox.Options{})
		// An earlier payout that exists: lookups of it prove that "not found" means something.
		if res := h.run(context.Background(), writePayroll(t, h.dir, "known.csv", payroll(2, "KNOWN")), nil); res.ExitCode != batch.ExitOK {
			t.Fatalf("setup run %+v", res)
		}
		rows := payroll(10, "GRACE")
		path := writePayroll(t, h.dir, "grace.csv", rows)
		res := h.run(context.Background(), path, failAfterProviders(h, sandbox.Faults{ErrorRate: 1}))
		if res.Unknown != len(rows) || res.ExitCode != batch.ExitAttention {
			t.Fatalf("result %+v, want every row unknown while every request fails", res)
		}
		if n := h.sandbox.Stats().Creates; n != 2 {
			t.Fatalf("%d creates while the service refused everything, want only the 2 earlier ones", n-2)
		}
		h.sandbox.SetFaults(sandbox.Faults{})
		res = h.run(context.Background(), path, nil)
		if res.ExitCode != batch.ExitOK {
			t.Fatalf("rerun %+v, want exit 0", res)
		}
		h.assertExactlyOnce(rows, res)
		events, err := h.db.Events(context.Background(), rows[0].ref)
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
			t.Errorf("events of %s show %d not-found lookups, want at least 3 before a resend: %+v", rows[0].ref, notFound, events)
		}
	})
	t.Run("--no-resend-unknown keeps them for reconciliation", func(t *testing.T) {
		h := newHarness(t, sandbox.Options{})
		rows := payroll(4, "KEEP")
		path := writePayroll(t, h.dir, "keep.csv", rows)
		h.run(context.Background(), path, failAfterProviders(h, sandbox.Faults{ErrorRate: 1}))
		h.sandbox.SetFaults(sandbox.Faults{})
		res := h.run(context.Background(), path, func(c *batch.Config) { c.NoResendUnknown = true })
		if res.ExitCode != batch.ExitAttention || res.Unknown != len(rows) {
			t.Fatalf("result %+v, want exit 4 with every row unknown", res)
		}
		if n := h.sandbox.Stats().Creates; n != 0 {
			t.Errorf("%d creates, want none", n)
		}
	})
	t.Run("never resent while no lookup of an existing payout has worked", func(t *testing.T) {
		// A fresh ledger, nothing ever accepted: "not found" cannot be told from a broken lookup.
		h := newHarness(t, sandbox.Options{})
		rows := payroll(2, "UNPROVEN")
		path := writePayroll(t, h.dir, "unproven.csv", rows)
		h.run(context.Background(), path, failAfterProviders(h, sandbox.Faults{ErrorRate: 1}))
		h.sandbox.SetFaults(sandbox.Faults{})
		res := h.run(context.Background(), path, nil)
		if res.ExitCode != batch.ExitAttention || res.Unknown != len(rows) {
			t.Fatalf("result %+v, want the rows kept UNKNOWN", res)
		}
		if n := h.sandbox.Stats().Creates; n != 0 {
			t.Errorf("%d creates, want none", n)
		}
	})
}

func providerID(tb testing.TB, prefix string) int64 {
	tb.Helper()
	for _, p := range sandbox.DefaultProviders() {
		if strings.HasPrefix(p.Name, prefix) {
			return p.ID
		}
	}
	tb.Fatalf("no provider named %s", prefix)
	return 0
}

func TestRunInterruptedSubmittingIsLookedUpFirst(t *testing.T) {
	// A process killed between recording SUBMITTING and recording the answer, after the service
	// created the payout. The next run must find it by lookup, not send it again.
	h := newHarness(t, sandbox.Options{})
	rows := payroll(3, "KILLED")
	for i := range rows {
		rows[i].bank = "Maybank"
	}
	path := writePayroll(t, h.dir, "killed.csv", rows)
	ctx := context.Background()
	if err := h.db.AddRun(ctx, ledger.Run{ID: "killed-run", Kind: "run", File: path, StartedAt: time.Now(), Status: "running"}); err != nil {
		t.Fatal(err)
	}
	var fresh []ledger.Payout
	for i, r := range rows {
		fresh = append(fresh, ledger.Payout{Ref: r.ref, RunID: "killed-run", Line: i + 2, Recipient: r.name, ProviderID: providerID(t, "Maybank"),
			Bank: "Maybank", Account: r.account, Amount: decimal.RequireFromString(r.amount), State: ledger.Ready})
	}
	if err := h.db.Record(ctx, "killed-run", nil, fresh); err != nil {
		t.Fatal(err)
	}
	for _, p := range fresh {
		if err := h.db.Apply(ctx, ledger.Change{Ref: p.Ref, From: ledger.Ready, To: ledger.Submitting, CountAttempt: true}); err != nil {
			t.Fatal(err)
		}
		_, err := h.client.CreatePayout(ctx, api.CreatePayoutRequest{VirtualPoolReference: "POOL-1", PayoutServiceID: p.ProviderID,
			Amount: p.Amount, ClientRedirectURL: "http://127.0.0.1:1/r", ClientCallbackURL: "http://127.0.0.1:1/c",
			ThirdPartyAccountNo: p.Account, RecipientReference: p.Recipient, ExternalInvoiceRef: p.Ref})
		if err != nil {
			t.Fatal(err)
		}
	}
	res := h.run(ctx, path, nil)
	if res.ExitCode != batch.ExitOK {
		t.Fatalf("rerun %+v, want exit 0", res)
	}
	h.assertExactlyOnce(rows, res)
}

func TestRunRejectedFileSendsNothing(t *testing.T) {
	h := newHarness(t, sandbox.Options{})
	rows := payroll(6, "BAD")
	rows[3].amount = "12.345"
	rows[4].bank = "Bank of Atlantis"
	path := writePayroll(t, h.dir, "bad.csv", rows)
	res := h.run(context.Background(), path, nil)
	if res.ExitCode != batch.ExitRejected || res.Rejected != 2 {
		t.Fatalf("result %+v, want exit 3 with 2 rejected", res)
	}
	if len(res.Problems) != 2 || res.Problems[0].Line != 5 || res.Problems[0].Column != "amount" ||
		res.Problems[1].Line != 6 || res.Problems[1].Column != "bank" || res.Problems[1].Value != "Bank of Atlantis" {
		t.Errorf("problems %+v, want line 5 amount and line 6 bank", res.Problems)
	}
	if n := h.sandbox.Stats().Creates; n != 0 {
		t.Fatalf("a rejected file sent %d creates", n)
	}
	if list, err := h.db.List(context.Background(), ledger.Filter{}); err != nil || len(list) != 0 {
		t.Fatalf("a rejected file wrote payouts: %d, %v", len(list), err)
	}

	t.Run("allow partial pays the valid rows", func(t *testing.T) {
		res := h.run(context.Background(), path, func(c *batch.Config) { c.AllowPartial = true })
		if res.ExitCode != batch.ExitAttention || res.Rejected != 2 || res.Submitted != 4 {
			t.Fatalf("result %+v, want exit 4, 2 rejected, 4 submitted", res)
		}
		counts := h.sandbox.CreateCounts()
		for i, r := range rows {
			want := 1
			if i == 3 || i == 4 {
				want = 0
			}
			if counts[r.ref] != want {
				t.Errorf("%s created %d times, want %d", r.ref, counts[r.ref], want)
			}
		}
	})
}

func TestRunDryRun(t *testing.T) {
	h := newHarness(t, sandbox.Options{})
	rows := payroll(10, "DRY")
	path := writePayroll(t, h.dir, "dry.csv", rows)
	res := h.run(context.Background(), path, func(c *batch.Config) { c.DryRun = true })
	if res.ExitCode != batch.ExitOK || !res.DryRun || res.Rows != 10 {
		t.Fatalf("result %+v, want a dry run of 10 valid rows", res)
	}
	if n := h.sandbox.Stats().Creates; n != 0 {
		t.Fatalf("dry run sent %d creates", n)
	}
	if list, err := h.db.List(context.Background(), ledger.Filter{}); err != nil || len(list) != 0 {
		t.Fatalf("dry run wrote payouts: %d, %v", len(list), err)
	}
	h.assertReport(res, len(rows), fileTotal(rows))
}

func TestRunUnauthorizedAborts(t *testing.T) {
	h := newHarness(t, sandbox.Options{})
	bad, err := api.NewClient(api.Config{BaseURL: h.server.URL, AuthToken: "wrong-token", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	path := writePayroll(t, h.dir, "auth.csv", payroll(2, "AUTH"))
	_, err = batch.NewRunner(func() batch.Config { c := h.cfg; c.Service = bad; return c }()).Run(context.Background(), path)
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
	if errors.Is(err, batch.ErrAborted) {
		t.Errorf("nothing was started, so nothing to resume: %v", err)
	}
}

func TestRunReportsXLSXWarnings(t *testing.T) {
	// An account typed as a number in a spreadsheet: Excel keeps 15 significant digits, so a longer
	// one may have lost digits. Accepted with --numeric-accounts, the row is paid as read, and its
	// report row says to check it.
	h := newHarness(t, sandbox.Options{})
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
	path := filepath.Join(h.dir, "warn.xlsx")
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	res := h.run(context.Background(), path, func(c *batch.Config) { c.Read.NumericAccounts = true })
	if res.ExitCode != batch.ExitOK {
		t.Fatalf("result %+v", res)
	}
	byRef := h.assertReport(res, 2, decimal.RequireFromString("3500.50"))
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
	ctx := context.Background()
	t.Run("created all the same: found, never FAILED, never sent again", func(t *testing.T) {
		h := newHarness(t, sandbox.Options{})
		rows := payroll(6, "MADE")
		path := writePayroll(t, h.dir, "made.csv", rows)
		res := h.run(ctx, path, failAfterProviders(h, sandbox.Faults{FailAfterCreateRate: 1}))
		if res.ExitCode != batch.ExitOK || res.Failed != 0 || res.Submitted != len(rows) {
			t.Fatalf("result %+v, want exit 0 with every row found at the service", res)
		}
		h.assertExactlyOnce(rows, res)
		events, err := h.db.Events(ctx, rows[0].ref)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(fmt.Sprint(events), "refused by the service, but found by external_invoice_ref") {
			t.Errorf("events of %s do not say the refused payout was found: %+v", rows[0].ref, events)
		}
		h.sandbox.SetFaults(sandbox.Faults{})
		if again := h.run(ctx, path, nil); again.ExitCode != batch.ExitOK || again.Skipped != len(rows) {
			t.Fatalf("rerun %+v, want every row skipped", again)
		}
		h.assertExactlyOnce(rows, res)
	})
	t.Run("not found: final FAILED, confirmed", func(t *testing.T) {
		// The sandbox refuses amounts over 1000.00 (HTTP 400) and creates nothing.
		h := newHarness(t, sandbox.Options{MaxAmount: decimal.RequireFromString("1000.00")})
		rows := payroll(2, "OVER")
		path := writePayroll(t, h.dir, "over.csv", rows)
		res := h.run(ctx, path, nil)
		if res.ExitCode != batch.ExitAttention || res.Failed != 1 || res.Succeeded+res.Pending != 1 {
			t.Fatalf("result %+v, want exit 4 with one row FAILED", res)
		}
		p, err := h.db.Get(ctx, rows[1].ref)
		if err != nil {
			t.Fatal(err)
		}
		if p.State != ledger.Failed || !batch.FailureConfirmed(p.InvoiceNo, p.LastError) {
			t.Errorf("refused row %+v, want FAILED with its refusal confirmed", p)
		}
		if n := h.sandbox.CreateCounts()[rows[1].ref]; n != 0 {
			t.Errorf("refused row created %d times", n)
		}
	})
	t.Run("the lookup fails: UNKNOWN, never FAILED", func(t *testing.T) {
		h := newHarness(t, sandbox.Options{})
		rows := payroll(3, "MUTE")
		path := writePayroll(t, h.dir, "mute.csv", rows)
		service := &hookedService{Client: h.client, beforeGet: func(string) error {
			return &api.Error{Op: "get payout", HTTPStatus: 502, Kind: api.KindRetryable}
		}}
		res := h.run(ctx, path, func(c *batch.Config) {
			c.Service = service
			failAfterProviders(h, sandbox.Faults{FailAfterCreateRate: 1})(c)
		})
		if res.ExitCode != batch.ExitAttention || res.Failed != 0 || res.Unknown != len(rows) {
			t.Fatalf("result %+v, want exit 4 with every row UNKNOWN", res)
		}
		for _, r := range rows {
			if p, err := h.db.Get(ctx, r.ref); err != nil || p.State != ledger.Unknown {
				t.Errorf("%s: %+v (%v), want UNKNOWN", r.ref, p, err)
			}
		}
	})
}
