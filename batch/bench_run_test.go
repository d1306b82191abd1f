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
	"github.com/payout/payout/batch"
)

// BenchmarkRunThroughput pays a file end to end (ledger with group commit, worker pool, sandbox on
// loopback with no latency and no rate limit) and, in the same run, sends the same number of
// creates from a bare loop at the same concurrency. It reports both rates and their ratio.
//
//	go test -run '^$' -bench RunThroughput -benchtime 1x ./batch/
func BenchmarkRunThroughput(b *testing.B) {
	const rows = 4000
	workers := envWorkers(32)
	for i := 0; i < b.N; i++ {
		bare := bareLoop(b, rows, workers)

		h := newHarness(b, sandbox.Options{SettleInterval: -1})
		file := writePayroll(b, h.dir, "bench.csv", payroll(rows, fmt.Sprintf("BENCH%d", i)))
		client, err := api.NewClient(api.Config{BaseURL: h.server.URL, AuthToken: testToken, Timeout: 10 * time.Second, MaxConns: workers})
		if err != nil {
			b.Fatal(err)
		}
		cfg := h.cfg
		cfg.Workers, cfg.Service = workers, client
		start := time.Now()
		res := h.pay(context.Background(), file, cfg)
		elapsed := time.Since(start)
		if res.ExitCode != batch.ExitOK || res.Submitted != rows {
			b.Fatalf("run %+v", res)
		}
		run := float64(rows) / elapsed.Seconds()
		b.ReportMetric(bare, "bare-creates/s")
		b.ReportMetric(run, "run-rows/s")
		b.ReportMetric(run/bare, "ratio")
	}
}

// bareLoop is the baseline: the same creates, the same concurrency, no file, no ledger.
func bareLoop(b *testing.B, rows, workers int) float64 {
	b.Helper()
	h := newHarness(b, sandbox.Options{SettleInterval: -1})
	client, err := api.NewClient(api.Config{BaseURL: h.server.URL, AuthToken: testToken, Timeout: 10 * time.Second, MaxConns: workers})
	if err != nil {
		b.Fatal(err)
	}
	refs := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range refs {
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
	return float64(rows) / time.Since(start).Seconds()
}

// BenchmarkRunRate50 pays 500 rows with --rate 50 and reports the achieved rate of creates as
// the service saw them, and the most requests the service saw in any one-second window.
//
//	go test -run '^$' -bench RunRate50 -benchtime 1x ./batch/
func BenchmarkRunRate50(b *testing.B) {
	const rows = 500
	for i := 0; i < b.N; i++ {
		h := newHarness(b, sandbox.Options{SettleInterval: -1})
		file := writePayroll(b, h.dir, "rate.csv", payroll(rows, fmt.Sprintf("RATE%d", i)))
		res := h.run(context.Background(), file, func(c *batch.Config) {
			c.Workers = 8
			c.Limiter = rate.NewLimiter(50, 1)
		})
		if res.ExitCode != batch.ExitOK {
			b.Fatalf("run %+v", res)
		}
		var first, last time.Time
		for _, rec := range h.sandbox.Payouts() {
			if first.IsZero() || rec.CreatedAt.Before(first) {
				first = rec.CreatedAt
			}
			if rec.CreatedAt.After(last) {
				last = rec.CreatedAt
			}
		}
		// rows-1 intervals between the first create and the last.
		achieved := float64(rows-1) / last.Sub(first).Seconds()
		b.ReportMetric(achieved, "creates/s")
		b.ReportMetric(float64(h.sandbox.MaxPerSecond()), "max-requests-in-1s")
	}
}

// envWorkers lets `make bench` try other concurrencies: PAYOUT_BENCH_WORKERS=64.
func envWorkers(def int) int {
	if n, err := strconv.Atoi(os.Getenv("PAYOUT_BENCH_WORKERS")); err == nil && n > 0 {
		return n
	}
	return def
}
