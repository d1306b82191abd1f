package batch_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/time/rate"

	"github.com/payout/payout/api"
	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/internal/batchtest"
)

// BenchmarkRunThroughput pays a file end to end (ledger with group commit, worker pool, sandbox on
// loopback with no latency and no rate limit) and, in the same run, sends the same number of
// creates from a bare loop at the same concurrency. It reports both rates and their ratio.
//
//	go test -run '^$' -bench RunThroughput -benchtime 1x ./batch/
func BenchmarkRunThroughput(b *testing.B) {
	rows := envInt("PAYOUT_BENCH_ROWS", 4000)
	workers := envInt("PAYOUT_BENCH_WORKERS", 32)
	for i := 0; i < b.N; i++ {
		bare := batchtest.NewUnthrottledHarness(b, sandbox.Options{SettleInterval: -1}, workers)
		bareTime := bareLoop(b, bare, rows)

		h := batchtest.NewUnthrottledHarness(b, sandbox.Options{SettleInterval: -1}, workers)
		file := batchtest.WritePayroll(b, h.Dir, "bench.csv", batchtest.Payroll(rows, fmt.Sprintf("BENCH%d", i)))
		start := time.Now()
		res := h.Pay(context.Background(), file, h.Cfg)
		runTime := time.Since(start)
		if res.ExitCode != exitcode.OK || res.Submitted != rows {
			b.Fatalf("run %+v", res)
		}
		b.ReportMetric(float64(rows)/bareTime.Seconds(), "bare-creates/s")
		b.ReportMetric(float64(rows)/runTime.Seconds(), "run-rows/s")
		b.ReportMetric(bareTime.Seconds()/runTime.Seconds(), "ratio")
	}
}

// BenchmarkRunRate50 pays a file at --rate 50 with a burst of 1 and 8 workers against a sandbox
// that answers every request in 50 ms, and, in the same run, sends the same creates from a bare
// loop through a limiter of the same rate, at the same latency and concurrency. It reports the
// rate of creates the service saw, the most requests that arrived at the service within any one
// second (and within one second of the clock), and the run's wall time over the bare loop's. The
// bare loop's figures beside them show what arrival jitter alone does to the counts.
//
//	go test -run '^$' -bench RunRate50 -benchtime 1x ./batch/
//	PAYOUT_BENCH_ROWS=200 go test -run '^$' -bench RunRate50 -benchtime 1x ./batch/  # a quick look
func BenchmarkRunRate50(b *testing.B) {
	rate50(b, 50*time.Millisecond, onSQLite)
}

// rate50 is BenchmarkRunRate50 at the sandbox's latency, the run's ledger and limiter those of
// wire; the bare loop's limiter is always this process's own.
func rate50(b *testing.B, latency time.Duration, wire func(*testing.B, *batchtest.Harness, rate.Limit)) {
	const limit, workers = 50, 8
	rows := envInt("PAYOUT_BENCH_ROWS", 2000)
	opts := sandbox.Options{SettleInterval: -1, Faults: sandbox.Faults{Latency: latency}}
	for i := 0; i < b.N; i++ {
		bare := batchtest.BuildHarness(b, opts, rate.NewLimiter(limit, 1), workers)
		bareTime := bareLoop(b, bare, rows)

		h := batchtest.BuildHarness(b, opts, rate.NewLimiter(limit, 1), workers)
		wire(b, h, limit)
		file := batchtest.WritePayroll(b, h.Dir, "rate.csv", batchtest.Payroll(rows, fmt.Sprintf("RATE%d", i)))
		start := time.Now()
		res := h.Pay(context.Background(), file, h.Cfg)
		runTime := time.Since(start)
		if res.ExitCode != exitcode.OK || res.Submitted != rows {
			b.Fatalf("run %+v", res)
		}
		b.ReportMetric(createRate(h.Sandbox), "creates/s")
		st := h.Sandbox.Stats()
		b.ReportMetric(float64(st.MaxInAnySecond), "max-requests-in-any-1s")
		b.ReportMetric(float64(st.MaxPerSecond), "max-requests-in-a-clock-second")
		b.ReportMetric(createRate(bare.Sandbox), "bare-creates/s")
		b.ReportMetric(float64(bare.Sandbox.Stats().MaxInAnySecond), "bare-max-in-any-1s")
		b.ReportMetric(runTime.Seconds()/bareTime.Seconds(), "wall-ratio")
	}
}

// createRate is the rate of creates the sandbox saw: the intervals between the first create and
// the last over the time between them.
func createRate(sb *sandbox.Server) float64 {
	var first, last time.Time
	payouts := sb.Payouts()
	for _, rec := range payouts {
		if first.IsZero() || rec.CreatedAt.Before(first) {
			first = rec.CreatedAt
		}
		if rec.CreatedAt.After(last) {
			last = rec.CreatedAt
		}
	}
	return float64(len(payouts)-1) / last.Sub(first).Seconds()
}

// bareLoop is the baseline: the same creates through the harness's client, limiter and number of
// workers, with no file and no ledger. It returns the wall time from the first wait on the
// limiter to the last answer.
func bareLoop(b *testing.B, h *batchtest.Harness, rows int) time.Duration {
	b.Helper()
	limiter, client := h.Cfg.Limiter, h.Client
	refs := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < h.Cfg.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range refs {
				if err := limiter.Wait(context.Background()); err != nil {
					b.Error(err)
					continue
				}
				_, err := client.CreatePayout(context.Background(), api.CreatePayoutRequest{VirtualPoolReference: "POOL-1",
					PayoutServiceID: 1, Amount: decimal.New(int64(1000+i), -2), ClientRedirectURL: "http://127.0.0.1:1/r",
					ClientCallbackURL: "http://127.0.0.1:1/c", ThirdPartyAccountNo: fmt.Sprintf("0%09d1", i),
					RecipientReference: "Bench", PaymentDescription: "Salary", ExternalInvoiceRef: fmt.Sprintf("BARE-%06d", i)})
				if err != nil {
					b.Error(err)
				}
			}
		}()
	}
	for i := 0; i < rows; i++ {
		refs <- i
	}
	close(refs)
	wg.Wait()
	return time.Since(start)
}

// envInt lets `make bench` try other sizes: PAYOUT_BENCH_ROWS=200, PAYOUT_BENCH_WORKERS=64.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}
