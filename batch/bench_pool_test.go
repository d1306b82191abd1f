package batch_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/internal/batchtest"
)

// BenchmarkPoolSizing pays a file at --rate 100 against a sandbox that answers every request in
// 200 ms, once with the pool left to size itself and once with 4 workers, and reports the rate of
// creates the service saw in each: 4 workers at 200 ms can send 20 a second at most.
//
//	go test -run '^$' -bench PoolSizing -benchtime 1x ./batch/
//	PAYOUT_BENCH_ROWS=200 go test -run '^$' -bench PoolSizing -benchtime 1x ./batch/  # a quick look
func BenchmarkPoolSizing(b *testing.B) {
	const limit, latency = 100, 200 * time.Millisecond
	rows := envInt("PAYOUT_BENCH_ROWS", 500)
	for _, workers := range []int{0, 4} {
		name := "workers=auto"
		if workers > 0 {
			name = fmt.Sprintf("workers=%d", workers)
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				opts := sandbox.Options{SettleInterval: -1, Faults: sandbox.Faults{Latency: latency}}
				h := batchtest.BuildHarness(b, opts, rate.NewLimiter(limit, 1), workers)
				file := batchtest.WritePayroll(b, h.Dir, "sizing.csv", batchtest.Payroll(rows, fmt.Sprintf("SIZE%d", i)))
				res := h.Pay(context.Background(), file, h.Cfg)
				if res.ExitCode != exitcode.OK || res.Submitted != rows {
					b.Fatalf("run %+v", res)
				}
				b.ReportMetric(createRate(h.Sandbox), "payouts/s")
				b.ReportMetric(float64(h.Sandbox.Stats().MaxInFlight), "max-in-flight")
			}
		})
	}
}
