package batch_test

import (
	"context"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/internal/pgtest"
	"github.com/payout/payout/ledger"
	"github.com/payout/payout/ledger/sharedrate"
)

// BenchmarkEnginesRate50 is BenchmarkRunRate50 against a sandbox answering in 40 ms, on a SQLite
// ledger and on a PostgreSQL one, one after the other in one run: on PostgreSQL the run takes
// the process's hold and waits on the merchant's limit shared through the database, as `payout
// run` wires them. Its database is in a cluster that syncs every commit (pgtest.Durable), as the
// SQLite ledger does.
//
//	PAYOUT_BENCH_ROWS=500 go test -run '^$' -bench EnginesRate50 -benchtime 1x ./batch/
func BenchmarkEnginesRate50(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { rate50(b, 40*time.Millisecond, onSQLite) })
	b.Run("postgres", func(b *testing.B) { rate50(b, 40*time.Millisecond, onPostgres) })
}

// onSQLite leaves the harness as it is: its ledger a SQLite file, its limiter this process's.
func onSQLite(*testing.B, *batchtest.Harness, rate.Limit) {}

// onPostgres moves the harness's runs to a new PostgreSQL ledger, with the process's hold on it
// and the limiter shared through it, at limit with a burst of 1.
func onPostgres(b *testing.B, h *batchtest.Harness, limit rate.Limit) {
	url := pgtest.Durable(b)
	db := batchtest.CreateLedger(b, url, ledger.Options{})
	hold, err := ledger.Take(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = hold.Close() })
	limiterDB, err := sharedrate.OpenDB(url, h.Cfg.Workers)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = limiterDB.Close() })
	limiter, err := sharedrate.New(limiterDB, sharedrate.Key(h.Server.URL, batchtest.Token), limit, 1)
	if err != nil {
		b.Fatal(err)
	}
	h.DB, h.Cfg.Ledger, h.Cfg.Limiter = db, db, limiter
	h.Cfg.Process, h.Cfg.Liveness, h.Cfg.Files = hold.Self().Claimant(), hold, hold
}
