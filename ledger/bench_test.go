package ledger_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/payout/payout/ledger"
)

// benchApply applies one one-change call per iteration, each moving a fresh payout from READY to
// SUBMITTING: the runner's intent write, durable before the POST.
func benchApply(b *testing.B, parallel bool) {
	db, _ := mustOpen(b)
	ps := seed(b, db, "bench", b.N)
	ctx := context.Background()
	var next atomic.Int64
	apply := func() {
		p := ps[next.Add(1)-1]
		if err := db.Apply(ctx, ledger.Change{Ref: p.Ref, From: ledger.Ready, To: ledger.Submitting, CountAttempt: true, Detail: "about to POST"}); err != nil {
			b.Error(err)
		}
	}
	b.ResetTimer()
	if parallel {
		b.SetParallelism(16) // 16 x GOMAXPROCS callers, like a runner's workers
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				apply()
			}
		})
	} else {
		for range b.N {
			apply()
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "changes/s")
}

// BenchmarkApplyGroupCommit: many goroutines, their calls merged into shared commits.
func BenchmarkApplyGroupCommit(b *testing.B) { benchApply(b, true) }

// BenchmarkApplySerial: one caller, so one durable commit per change.
func BenchmarkApplySerial(b *testing.B) { benchApply(b, false) }

// BenchmarkRecord: storing input rows and fresh payouts (with their events), per row.
func BenchmarkRecord(b *testing.B) {
	db, _ := mustOpen(b)
	b.ResetTimer()
	seed(b, db, "bench", b.N)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
