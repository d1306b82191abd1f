package ledger_test

import (
	"database/sql"
	"sync"
	"testing"

	"github.com/payout/payout/ledger"
	"github.com/payout/payout/ledger/ledgertest"
)

// TestSQLiteConformance runs the ledger's conformance suite on the SQLite engine: a file made by
// Create in a temporary folder, a second handle opened on the same file by Open.
func TestSQLiteConformance(t *testing.T) {
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
			return openAt(tb, path.(string))
		},
		SQL: func(tb testing.TB, l ledger.Ledger) *sql.DB { return ledger.SQLOf(l.(*ledger.DB)) },
	})
}
