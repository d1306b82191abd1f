package batchtest

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"hash/fnv"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/time/rate"

	"github.com/payout/payout/api"
	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/pool"
	"github.com/payout/payout/batch/runs"
	"github.com/payout/payout/ledger"
)

// Token and HashKey are the sandbox's credentials.
const (
	Token   = "test-token-0123456789"
	HashKey = "test-hash-key-0123456789"
)

// Harness is a sandbox on loopback, a client, a ledger file and a runner configuration.
type Harness struct {
	TB      testing.TB
	Sandbox *sandbox.Server
	Server  *httptest.Server
	Client  *api.Client
	DB      *ledger.DB
	Dir     string
	Cfg     batch.Config
	// Clock is the time of the sandbox and of the runs (Cfg.Clock) of a NewHarness: a jumping
	// clock, on which every wait of a run, the sandbox's latency and the limiter's turns end at
	// once. Nil for the other Harnesses, which run in real time.
	Clock *Clock
	// latency and jitter are the sandbox's when the Harness was made.
	latency, jitter time.Duration
}

// The end-to-end run tests pay at settings users run with, in the time of a jumping clock
// (Harness.Clock): a limiter of Rate a second with a burst of 1, Workers workers, and a sandbox
// that answers in 5-20 ms. No wait is real, but the rate and the latency hold in the clock's time,
// where the sandbox counts its requests (AssertRate). The latencies of requests in flight
// together mostly add up on that clock rather than overlap (fakeclock.NewJumping), so a run
// there is paced by them more than by the rate; a sandbox that answers at once leaves the pace
// to the limiter. NewUnthrottledHarness is for the short runs without either, and for the
// benchmarks, which time real runs.
const (
	Rate          = 100
	Workers       = 8
	Latency       = 5 * time.Millisecond
	LatencyJitter = 15 * time.Millisecond
)

// NewHarness is a Harness at the production-like settings, in the time of a jumping clock that
// starts now; the sandbox's latency is added to opts.Faults unless they set their own.
func NewHarness(tb testing.TB, opts sandbox.Options) *Harness {
	tb.Helper()
	if opts.Faults.Latency == 0 && opts.Faults.LatencyJitter == 0 {
		opts.Faults.Latency, opts.Faults.LatencyJitter = Latency, LatencyJitter
	}
	clock := NewJumpingClock(time.Now())
	opts.Now, opts.After = clock.Now, clock.After
	h := BuildHarness(tb, opts, NewLimiter(clock, Rate, 1), Workers)
	h.Clock, h.Cfg.Clock = clock, clock
	return h
}

// NewUnthrottledHarness is a Harness with no rate limit and a sandbox that answers at once, in
// real time, for the short unthrottled test and the throughput benchmark.
func NewUnthrottledHarness(tb testing.TB, opts sandbox.Options, workers int) *Harness {
	tb.Helper()
	opts.Faults.Latency, opts.Faults.LatencyJitter = 0, 0
	return BuildHarness(tb, opts, rate.NewLimiter(rate.Inf, 1), workers)
}

// BuildHarness is a Harness whose runs go through limiter with workers workers, at the sandbox's
// settings in opts, in real time unless opts and limiter say otherwise.
func BuildHarness(tb testing.TB, opts sandbox.Options, limiter pool.Limiter, workers int) *Harness {
	tb.Helper()
	opts.AuthToken, opts.HashKey = Token, []byte(HashKey)
	if opts.Seed == 0 {
		opts.Seed = 7
	}
	sb := sandbox.New(opts)
	ts := httptest.NewServer(sb)
	tb.Cleanup(func() {
		ts.Close()
		sb.Close()
	})
	client, err := api.NewClient(api.Config{BaseURL: ts.URL, AuthToken: Token, Timeout: 5 * time.Second, MaxConns: workers})
	if err != nil {
		tb.Fatal(err)
	}
	dir := tb.TempDir()
	db := CreateLedger(tb, filepath.Join(dir, "ledger.db"), ledger.Options{})
	h := &Harness{TB: tb, Sandbox: sb, Server: ts, Client: client, DB: db, Dir: dir,
		latency: opts.Faults.Latency, jitter: opts.Faults.LatencyJitter}
	h.Cfg = batch.Config{
		Ledger: db, Service: client, Limiter: limiter, Workers: workers,
		VirtualPoolRef: "POOL-1", CallbackURL: "http://127.0.0.1:1/callback", RedirectURL: "http://127.0.0.1:1/return",
		ReportDir:    filepath.Join(dir, "reports"),
		UnknownGrace: 30 * time.Millisecond, NotFoundLookups: 3,
		BackoffBase: time.Millisecond, BackoffMax: 10 * time.Millisecond,
	}
	return h
}

// SetFaults turns faults on and keeps the Harness's latency unless they set their own.
func (h *Harness) SetFaults(f sandbox.Faults) {
	if f.Latency == 0 && f.LatencyJitter == 0 {
		f.Latency, f.LatencyJitter = h.latency, h.jitter
	}
	h.Sandbox.SetFaults(f)
}

// CreateLedger makes a new ledger at path, open for the test with opts: a copy of a ledger that
// ledger.Create made once for the test process. Under the race detector, making one (every
// migration, in a pure-Go SQLite) takes about 0.3 s of CPU, and the tests make hundreds; the
// copy is the file Create leaves, byte for byte. A PostgreSQL ledger (path a URL), and options
// that Create writes into the ledger (Now, Approvals, Actor, Version), are made by Create.
func CreateLedger(tb testing.TB, path string, opts ledger.Options) *ledger.DB {
	tb.Helper()
	if ledger.IsURL(path) || opts.Now != nil || opts.Approvals != 0 || opts.Actor != "" || opts.Version != "" {
		db, err := ledger.Create(context.Background(), path, opts)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { db.Close() })
		return db
	}
	newLedger.once.Do(func() { newLedger.file, newLedger.err = createdLedgerFile() })
	if newLedger.err != nil {
		tb.Fatal(newLedger.err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := f.Write(newLedger.file); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	db, err := ledger.Open(context.Background(), path, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// newLedger is the file of a ledger just made, once a test process has made one.
var newLedger struct {
	once sync.Once
	file []byte
	err  error
}

// createdLedgerFile makes a ledger in a folder of its own, closes it and returns its file.
func createdLedgerFile() ([]byte, error) {
	dir, err := os.MkdirTemp("", "payout-new-ledger-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "ledger.db")
	db, err := ledger.Create(context.Background(), path, ledger.Options{})
	if err != nil {
		return nil, err
	}
	if err := db.Close(); err != nil {
		return nil, err
	}
	// Closed, the ledger is its file alone: a write-ahead log left beside it would be part of it.
	if _, err := os.Stat(path + "-wal"); err == nil {
		return nil, fmt.Errorf("a new ledger left %s-wal after it was closed", path)
	}
	return os.ReadFile(path)
}

// Run pays path with the Harness's config, edited, and checks that the run's report says what
// `payout report` writes from the ledger.
func (h *Harness) Run(ctx context.Context, path string, edit func(*batch.Config)) batch.Result {
	h.TB.Helper()
	cfg := h.Cfg
	if edit != nil {
		edit(&cfg)
	}
	res := h.Pay(ctx, path, cfg)
	if !res.DryRun && cfg.Ledger != nil {
		h.SameReportFromLedger(cfg.Ledger, res)
	}
	return res
}

// Pay is Run without the check, for the benchmarks, which time it.
func (h *Harness) Pay(ctx context.Context, path string, cfg batch.Config) batch.Result {
	h.TB.Helper()
	res, err := batch.NewRunner(cfg).Run(ctx, path)
	if err != nil {
		h.TB.Fatalf("run %s: %v", path, err)
	}
	return res
}

// SameReportFromLedger checks that the run's result CSV, written at the end of the run, says
// what `payout report` writes from the ledger afterwards: both read the run with one query.
func (h *Harness) SameReportFromLedger(db runs.ReportLedger, res batch.Result) {
	h.TB.Helper()
	written := ResultCSV(h.TB, res)
	again, err := runs.WriteReports(context.Background(), db, res.RunID, h.TB.TempDir(), "", time.Now(), nil, "")
	if err != nil {
		h.TB.Fatal(err)
	}
	want, err := os.ReadFile(again.CSV)
	if err != nil {
		h.TB.Fatal(err)
	}
	got, err := os.ReadFile(written)
	if err != nil {
		h.TB.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		h.TB.Errorf("run %s: its CSV report differs from the one written from the ledger\nrun:\n%s\nledger:\n%s", res.RunID, got, want)
	}
}

// PayrollRow is one row of a generated test file.
type PayrollRow struct {
	Ref, Name, Bank, Account, Amount string
}

// Payroll is n rows with references prefix-00001 and up, over five banks.
func Payroll(n int, prefix string) []PayrollRow {
	banks := []string{"Maybank", "CIMB Bank Berhad", "Public Bank", "RHB Bank", "Hong Leong Bank"}
	// Each prefix pays its own accounts: two payrolls of one test are not repeats of each other.
	h := fnv.New32a()
	h.Write([]byte(prefix))
	accounts := h.Sum32() % 1000
	rows := make([]PayrollRow, n)
	for i := range rows {
		rows[i] = PayrollRow{
			Ref:     fmt.Sprintf("%s-%05d", prefix, i+1),
			Name:    fmt.Sprintf("Employee %d", i+1),
			Bank:    banks[i%len(banks)],
			Account: fmt.Sprintf("%03d%08d1", accounts, 1000+i),
			Amount:  fmt.Sprintf("%d.%02d", 1000+i, i%100),
		}
	}
	return rows
}

// WritePayroll writes rows as a CSV payout file named name in dir and returns its path.
func WritePayroll(tb testing.TB, dir, name string, rows []PayrollRow) string {
	tb.Helper()
	var b strings.Builder
	b.WriteString("external_invoice_ref,recipient_reference,bank,third_party_account_no,amount,payment_description\r\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%s,%s,%s,%s,%s,Salary November\r\n", r.Ref, r.Name, r.Bank, r.Account, r.Amount)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// FileTotal is the sum of the rows' amounts.
func FileTotal(rows []PayrollRow) decimal.Decimal {
	total := decimal.Zero
	for _, r := range rows {
		total = total.Add(decimal.RequireFromString(r.Amount))
	}
	return total
}

// AssertExactlyOnce checks, from the sandbox's own record, that every row was created exactly once,
// and that ledger, sandbox and the result report agree row by row and in totals.
func (h *Harness) AssertExactlyOnce(rows []PayrollRow, res batch.Result) {
	h.TB.Helper()
	counts := h.Sandbox.CreateCounts()
	for _, r := range rows {
		if counts[r.Ref] != 1 {
			h.TB.Errorf("%s was created %d times by the service, want exactly 1", r.Ref, counts[r.Ref])
		}
	}
	if dups := h.Sandbox.Duplicates(); len(dups) > 0 {
		h.TB.Errorf("paid twice: %v", dups)
	}
	records := make(map[string]sandbox.Record)
	for _, rec := range h.Sandbox.Payouts() {
		records[rec.ExternalInvoiceRef] = rec
	}
	ctx := context.Background()
	for _, r := range rows {
		p, err := h.DB.Get(ctx, r.Ref)
		if err != nil {
			h.TB.Errorf("ledger lost %s: %v", r.Ref, err)
			continue
		}
		if !p.State.Accepted() {
			h.TB.Errorf("%s: ledger state %s, want SUBMITTED or SUCCEEDED (last error %q)", r.Ref, p.State, p.LastError)
		}
		rec := records[r.Ref]
		if p.InvoiceNo != rec.InvoiceNo {
			h.TB.Errorf("%s: ledger invoice %q, service %q", r.Ref, p.InvoiceNo, rec.InvoiceNo)
		}
		if !p.Amount.Equal(rec.Amount) || !p.Amount.Equal(decimal.RequireFromString(r.Amount)) {
			h.TB.Errorf("%s: ledger amount %s, service %s, file %s", r.Ref, p.Amount, rec.Amount, r.Amount)
		}
	}
	h.AssertReport(res, len(rows), FileTotal(rows))
}

// AssertRate checks, from the sandbox's count of the requests that arrived within any second of
// the Harness's clock, that the runs of a NewHarness, at their Workers workers or fewer, kept to
// Rate: a second holds the turns the limiter grants in it (Rate, and its burst of 1), and at most
// one request of each worker whose turn came before it.
func (h *Harness) AssertRate() {
	h.TB.Helper()
	if h.Clock == nil {
		h.TB.Fatal("AssertRate checks the rate of a NewHarness, in its clock's time")
	}
	if most, got := Rate+1+Workers, h.Sandbox.Stats().MaxInAnySecond; got > most {
		h.TB.Errorf("the service counted %d requests within one second of the clock at a rate of %d with %d workers: want at most %d",
			got, Rate, Workers, most)
	}
}

// ResultCSV is the path of the run's result CSV among its reports.
func ResultCSV(tb testing.TB, res batch.Result) string {
	tb.Helper()
	for _, p := range res.Reports {
		if strings.HasSuffix(p, ".result.csv") {
			return p
		}
	}
	tb.Fatalf("run %s wrote no CSV report among %v", res.RunID, res.Reports)
	return ""
}

// AssertReport reads the result CSV and checks it has a row per input row and ties out to wantTotal.
func (h *Harness) AssertReport(res batch.Result, wantRows int, wantTotal decimal.Decimal) map[string][]string {
	h.TB.Helper()
	if !res.TotalAmount.Equal(wantTotal) {
		h.TB.Errorf("result total %s, want %s", res.TotalAmount, wantTotal)
	}
	f, err := os.Open(ResultCSV(h.TB, res))
	if err != nil {
		h.TB.Fatal(err)
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		h.TB.Fatal(err)
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
		h.TB.Errorf("report has %d rows, want %d", len(records)-1, wantRows)
	}
	if !total.Equal(wantTotal) {
		h.TB.Errorf("report rows add up to %s, want %s", total, wantTotal)
	}
	sumByState := res.Rejected + res.Succeeded + res.Pending + res.Failed + res.Unknown + res.NotSent
	if sumByState != res.Rows {
		h.TB.Errorf("counts by state add up to %d, want %d rows", sumByState, res.Rows)
	}
	return byRef
}

// FailAfterProviders turns faults on once the provider list has been read: Progress is first
// called just before dispatching starts.
func FailAfterProviders(h *Harness, faults sandbox.Faults) func(*batch.Config) {
	return func(c *batch.Config) {
		c.BreakerThreshold, c.MaxLookupErrors = 1000, 2
		var once atomic.Bool
		c.Progress = func(done, total int) {
			if once.CompareAndSwap(false, true) {
				h.SetFaults(faults)
			}
		}
	}
}

// ProviderID is the sandbox's id of the first provider whose name starts with prefix.
func ProviderID(tb testing.TB, prefix string) int64 {
	tb.Helper()
	for _, p := range sandbox.DefaultProviders() {
		if strings.HasPrefix(p.Name, prefix) {
			return p.ID
		}
	}
	tb.Fatalf("no provider named %s", prefix)
	return 0
}

// LogBuffer collects log lines that several goroutines write at once.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// ReadFile is the content of the file at path.
func ReadFile(tb testing.TB, path string) string {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}

// HookedService is the client with a hook that runs before each lookup; an error from the hook
// is the lookup's answer.
type HookedService struct {
	*api.Client
	BeforeGet func(ref string) error
}

var _ batch.Service = (*HookedService)(nil)

func (h *HookedService) GetPayout(ctx context.Context, ref string) (api.Payout, error) {
	if err := h.BeforeGet(ref); err != nil {
		return api.Payout{}, err
	}
	return h.Client.GetPayout(ctx, ref)
}
