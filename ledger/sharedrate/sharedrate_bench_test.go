package sharedrate_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/payout/payout/ledger/sharedrate"
)

// BenchmarkLimiterStatement is the cost of one Wait's statement: no rate limit, so
// nothing is slept, on one merchant's row.
func BenchmarkLimiterStatement(b *testing.B) {
	url := limiterDatabase(b)
	l := sharedLimiter(b, openPG(b, url), sharedrate.Key("https://payouts.example", "bench"), rate.Inf, 1)
	ctx := context.Background()
	for b.Loop() {
		if err := l.Wait(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLimiterThreeAt50 is three limiters (three processes' handles) of one merchant at
// 50 a second, burst 1, four workers each, Waiting b.N times in all: grants/s is the rate the
// server's grants held, wall_req/s the rate the Waits returned at.
func BenchmarkLimiterThreeAt50(b *testing.B) {
	url := limiterDatabase(b)
	merchant := sharedrate.Key("https://payouts.example", "bench-50")
	var limiters []*sharedrate.Limiter
	for range 3 {
		limiters = append(limiters, sharedLimiter(b, openPG(b, url), merchant, 50, 1))
	}
	var (
		left       atomic.Int64
		mu         sync.Mutex
		first, end time.Time
		wg         sync.WaitGroup
	)
	left.Store(int64(b.N))
	b.ResetTimer()
	start := time.Now()
	for _, l := range limiters {
		for range 4 {
			wg.Go(func() {
				for left.Add(-1) >= 0 {
					g, err := l.WaitGrant(context.Background())
					if err != nil {
						b.Error(err)
						return
					}
					mu.Lock()
					if first.IsZero() || g.Before(first) {
						first = g
					}
					if g.After(end) {
						end = g
					}
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	took := time.Since(start)
	b.StopTimer()
	if span := end.Sub(first); b.N > 1 && span > 0 {
		b.ReportMetric(float64(b.N-1)/span.Seconds(), "grants/s")
	}
	b.ReportMetric(float64(b.N)/took.Seconds(), "wall_req/s")
}
