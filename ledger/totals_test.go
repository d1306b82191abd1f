package ledger_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/ledger"
	"github.com/payout/payout/ledger/ledgertest"
)

// countsByScan is Counts the slow way: every payout read and added up in Go.
func countsByScan(tb testing.TB, db *ledger.DB) map[ledger.State]ledger.CountAmount {
	tb.Helper()
	ps := ledgertest.Payouts(tb, db, ledger.Filter{})
	out := make(map[ledger.State]ledger.CountAmount)
	for _, p := range ps {
		c := out[p.State]
		out[p.State] = ledger.CountAmount{Count: c.Count + 1, Amount: c.Amount.Add(p.Amount)}
	}
	return out
}

func sameCounts(tb testing.TB, got, want map[ledger.State]ledger.CountAmount) {
	tb.Helper()
	for s, w := range want {
		if g := got[s]; g.Count != w.Count || !g.Amount.Equal(w.Amount) {
			tb.Errorf("%s: %d payouts, %s MYR; a scan of the payouts says %d, %s", s, g.Count, g.Amount, w.Count, w.Amount)
		}
	}
	for s, g := range got {
		if _, ok := want[s]; !ok {
			tb.Errorf("%s: %d payouts, %s MYR; a scan of the payouts finds none", s, g.Count, g.Amount)
		}
	}
}

func mustCounts(tb testing.TB, db *ledger.DB) map[ledger.State]ledger.CountAmount {
	tb.Helper()
	totals, err := db.Counts(context.Background(), ledger.CountRead{})
	if err != nil {
		tb.Fatal(err)
	}
	return totals.States
}

// TestCountsFollowEveryMove: the running totals agree with the payouts after records, moves,
// changes without a move, a call refused half-way and a deleted row.
func TestCountsFollowEveryMove(t *testing.T) {
	t.Parallel()
	db, _ := mustOpen(t)
	ctx := context.Background()
	if err := db.AddRun(ctx, ledger.Run{ID: "r1", Kind: "run", StartedAt: time.Now(), Status: "running"}); err != nil {
		t.Fatal(err)
	}
	amounts := []string{"0.01", "1.10", "12345.67", "99999999999999.99", "7", "0.5"}
	var ps []ledger.Payout
	for i := range 60 {
		ps = append(ps, payout(fmt.Sprintf("m-%d", i), amounts[i%len(amounts)], i+2))
	}
	if err := db.Record(ctx, "r1", nil, ps); err != nil {
		t.Fatal(err)
	}
	sameCounts(t, mustCounts(t, db), countsByScan(t, db))
	path := []ledger.State{ledger.Ready, ledger.Submitting, ledger.Submitted, ledger.Succeeded}
	for i, p := range ps {
		for step := range i % len(path) {
			if err := db.Apply(ctx, ledger.Change{Ref: p.Ref, From: path[step], To: path[step+1]}); err != nil {
				t.Fatal(err)
			}
		}
		if st := path[i%len(path)]; i%5 == 0 && ledger.Allowed(st, st) { // an event without a move
			if err := db.Apply(ctx, ledger.Change{Ref: p.Ref, From: st, To: st, Detail: "looked up"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A call whose second change is refused keeps none of its changes, nor their totals.
	err := db.Apply(ctx, ledger.Change{Ref: ps[0].Ref, From: ledger.Ready, To: ledger.Failed},
		ledger.Change{Ref: ps[1].Ref, From: ledger.Ready, To: ledger.Failed})
	if err == nil {
		t.Fatal("a call with a change from the wrong state was applied")
	}
	sameCounts(t, mustCounts(t, db), countsByScan(t, db))
	if _, err := ledger.SQLOf(db).Exec(`INSERT INTO payouts (ref, run_id, line, recipient, provider_id, bank, account,
		amount, description, state, created_at, updated_at) VALUES ('gone', 'r1', 99, 'x', 7, 'b', '1', '3.21', '', 'FAILED', '', '')`); err != nil {
		t.Fatal(err)
	}
	if got := mustCounts(t, db)[ledger.Failed]; got.Count != 1 || got.Amount.String() != "3.21" {
		t.Errorf("FAILED after an insert: %d %s, want 1 3.21", got.Count, got.Amount)
	}
	if _, err := ledger.SQLOf(db).Exec(`DELETE FROM payouts WHERE ref = 'gone'`); err != nil {
		t.Fatal(err)
	}
	sameCounts(t, mustCounts(t, db), countsByScan(t, db))
}

func TestRecordRefusesAFractionOfASen(t *testing.T) {
	t.Parallel()
	db, _ := mustOpen(t)
	ctx := context.Background()
	if err := db.AddRun(ctx, ledger.Run{ID: "r1", Kind: "run", StartedAt: time.Now(), Status: "running"}); err != nil {
		t.Fatal(err)
	}
	err := db.Record(ctx, "r1", nil, []ledger.Payout{payout("ok", "1.00", 2), payout("frac", "1.005", 3)})
	if err == nil || !strings.Contains(err.Error(), "exactly two decimals") {
		t.Fatalf("err %v, want a refusal of 1.005", err)
	}
	if n := len(countsByScan(t, db)); n != 0 {
		t.Errorf("%d states hold payouts after a refused record, want none", n)
	}
}

// versionOneLedger makes a ledger of the first schema, holding payouts of these amounts.
func versionOneLedger(t *testing.T, amounts ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	schema, err := os.ReadFile("migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	sdb, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	stmts := []string{string(schema), `PRAGMA user_version = 1`,
		`INSERT INTO runs (id, kind, started_at, status) VALUES ('r1', 'run', '2025-01-01T00:00:00.000000000Z', 'finished')`}
	for i, a := range amounts {
		state := []string{"SUCCEEDED", "FAILED", "SUBMITTED"}[i%3]
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO payouts (ref, run_id, line, recipient, provider_id, bank, account,
			amount, description, state, created_at, updated_at) VALUES ('p-%d', 'r1', %d, 'x', 7, 'b', '1', '%s', '', '%s', '', '')`,
			i, i+2, a, state))
	}
	for _, s := range stmts {
		if _, err := sdb.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func TestMigrationTotalsTheExistingPayouts(t *testing.T) {
	t.Parallel()
	path := versionOneLedger(t, "10.00", "0.01", "99999999999999.99", "123.45", "0.10", "5.05", "1.00")
	db := openAt(t, path)
	want := countsByScan(t, db)
	sameCounts(t, mustCounts(t, db), want)
	if got := want[ledger.Succeeded].Amount; !got.Equal(decimal.RequireFromString("134.45")) {
		t.Errorf("SUCCEEDED totals %s by scan, want 134.45", got)
	}
}

func TestMigrationRefusesAFractionOfASen(t *testing.T) {
	t.Parallel()
	path := versionOneLedger(t, "10.00", "0.015")
	db, err := ledger.Open(context.Background(), path, ledger.Options{})
	if err == nil {
		db.Close()
		t.Fatal("a ledger holding 0.015 was migrated")
	}
	if !strings.Contains(err.Error(), "a stored amount has other than two decimals") {
		t.Errorf("err %v, want it to say that an amount has other than two decimals", err)
	}
}
