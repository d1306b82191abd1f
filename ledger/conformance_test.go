package ledger_test

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"testing"

	"github.com/payout/payout/internal/pgtest"
	"github.com/payout/payout/ledger"
	"github.com/payout/payout/ledger/ledgertest"
)

// TestSQLiteConformance runs the ledger's conformance suite on the SQLite engine: a file made by
// Create in a temporary folder, a second handle opened on the same file by Open, a process's hold
// the file lock.
func TestSQLiteConformance(t *testing.T) {
	t.Parallel()
	var paths sync.Map // *ledger.DB -> its file
	ledgertest.Run(t, ledgertest.Engine{
		New: func(tb testing.TB) ledger.Ledger {
			db, path := mustOpen(tb)
			paths.Store(db, path)
			return db
		},
		Again: func(tb testing.TB, l ledger.Ledger) ledger.Ledger {
			path, ok := paths.Load(l)
			if !ok {
				tb.Fatal("a second handle on a ledger the suite did not make")
			}
			again := openAt(tb, path.(string))
			paths.Store(again, path)
			return again
		},
		Hold: func(tb testing.TB, l ledger.Ledger) (ledgertest.Holder, bool) {
			path, ok := paths.Load(l)
			if !ok {
				tb.Fatal("a hold on a ledger the suite did not make")
			}
			lock, err := ledger.Lock(path.(string))
			if errors.Is(err, ledger.ErrLocked) {
				return ledgertest.Holder{}, false
			}
			if err != nil {
				tb.Fatal(err)
			}
			var once sync.Once
			release := func() {
				once.Do(func() {
					if err := lock.Close(); err != nil {
						tb.Error(err)
					}
				})
			}
			tb.Cleanup(release)
			return ledgertest.Holder{Claimant: lock.Process.Claimant(), Alive: lock, Release: release}, true
		},
		SQL: func(tb testing.TB, l ledger.Ledger) *sql.DB { return ledger.SQLOf(l.(*ledger.DB)) },
	})
}

// TestPostgresConformance runs the suite on the PostgreSQL engine: a database of its own per
// test (internal/pgtest), a second handle opened by Open on the same URL, a process's hold a
// session advisory lock on a connection of its own.
func TestPostgresConformance(t *testing.T) {
	t.Parallel()
	var urls sync.Map // *ledger.DB -> its URL
	ledgertest.Run(t, ledgertest.Engine{
		New: func(tb testing.TB) ledger.Ledger {
			url := pgtest.New(tb)
			db, err := ledger.Create(context.Background(), url, ledger.Options{})
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(func() { db.Close() })
			urls.Store(db, url)
			return db
		},
		Again: func(tb testing.TB, l ledger.Ledger) ledger.Ledger {
			url, ok := urls.Load(l)
			if !ok {
				tb.Fatal("a second handle on a ledger the suite did not make")
			}
			again, err := ledger.Open(context.Background(), url.(string), ledger.Options{})
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(func() { again.Close() })
			urls.Store(again, url)
			return again
		},
		Hold: func(tb testing.TB, l ledger.Ledger) (ledgertest.Holder, bool) {
			url, ok := urls.Load(l)
			if !ok {
				tb.Fatal("a hold on a ledger the suite did not make")
			}
			return ledgertest.TakeHold(tb, url.(string))
		},
		SQL: func(tb testing.TB, l ledger.Ledger) *sql.DB { return ledger.SQLOf(l.(*ledger.DB)) },
	})
}
