package main

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/time/rate"

	"github.com/payout/payout/internal/pgtest"
	"github.com/payout/payout/ledger/sharedrate"
)

// TestLimiterIsTheMerchantsOnAPostgreSQLLedger: on a ledger named by a URL every request waits on
// the merchant's row of the ledger's database, keyed without the token; on a SQLite file on the
// process's own limiter.
func TestLimiterIsTheMerchantsOnAPostgreSQLLedger(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	url := pgtest.New(t)
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	schema, err := os.ReadFile("../../ledger/migrations/postgres/0003_rate_limits.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(string(schema)); err != nil {
		t.Fatal(err)
	}
	const token = "merchant-token-never-stored"
	cfg := config{Ledger: url, BaseURL: "https://payouts.example", AuthToken: token, Rate: 25, Workers: 4}
	lim, closer, err := newLimiter(cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lim.(*sharedrate.Limiter); !ok || closer == nil || lim.Limit() != 25 {
		t.Fatalf("limiter %T at %v (closer %v), want the shared one at 25/s with its handle", lim, lim.Limit(), closer)
	}
	if err := lim.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := closer.Close(); err != nil {
		t.Fatal(err)
	}
	var rows []string
	r, err := db.Query(`SELECT merchant, row_to_json(l)::text FROM rate_limits l`)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for r.Next() {
		var key, row string
		if err := r.Scan(&key, &row); err != nil {
			t.Fatal(err)
		}
		if key != sharedrate.Key(cfg.BaseURL, token) || strings.Contains(row, token) {
			t.Errorf("row %s: want the merchant's key, and no token", row)
		}
		rows = append(rows, row)
	}
	if len(rows) != 1 {
		t.Errorf("rate_limits holds %d rows after a Wait, want the merchant's", len(rows))
	}

	cfg.Ledger = filepath.Join(t.TempDir(), "ledger.db")
	lim, closer, err = newLimiter(cfg, 2)
	if _, ok := lim.(*rate.Limiter); !ok || closer != nil || err != nil {
		t.Errorf("on a SQLite file: %T, %v, %v; want the process's own rate.Limiter", lim, closer, err)
	}
}
