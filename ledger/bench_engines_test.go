package ledger_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/payout/payout/internal/pgtest"
	"github.com/payout/payout/ledger"
)

// BenchmarkEnginesFourWriters is the chain's throughput with four writers on handles of their
// own (four processes' views of one ledger, as the conformance suite's concurrent writers are):
// each Apply moves a fresh payout from READY to SUBMITTING, one change per call, on a SQLite
// file and on a PostgreSQL database in a cluster that syncs every commit (pgtest.Durable), as
// SQLite does.
//
//	go test -run '^$' -bench EnginesFourWriters -benchtime 2s ./ledger/
func BenchmarkEnginesFourWriters(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		db, path := mustOpen(b)
		handles := []*ledger.DB{db}
		for range 3 {
			handles = append(handles, openAt(b, path))
		}
		fourWriters(b, handles)
	})
	b.Run("postgres", func(b *testing.B) {
		url := pgtest.Durable(b)
		db, err := ledger.Create(context.Background(), url, ledger.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		handles := []*ledger.DB{db}
		for range 3 {
			h, err := ledger.Open(context.Background(), url, ledger.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { h.Close() })
			handles = append(handles, h)
		}
		fourWriters(b, handles)
	})
}

// fourWriters applies b.N changes, each from the goroutine of one of handles.
func fourWriters(b *testing.B, handles []*ledger.DB) {
	ps := seed(b, handles[0], "bench", b.N)
	ctx := context.Background()
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for _, h := range handles {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(ps)); i = next.Add(1) - 1 {
				if err := h.Apply(ctx, ledger.Change{Ref: ps[i].Ref, From: ledger.Ready, To: ledger.Submitting, CountAttempt: true, Detail: "about to POST"}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "changes/s")
}
