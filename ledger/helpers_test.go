package ledger_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/payout/payout/internal/fakeclock"
	"github.com/payout/payout/ledger"
	"github.com/shopspring/decimal"
)

// ticking is a fake clock that moves one millisecond per reading, from a fixed morning.
func ticking() func() time.Time {
	return fakeclock.New(time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)).Ticking(time.Millisecond)
}

func openAt(tb testing.TB, path string) *ledger.DB {
	tb.Helper()
	db, err := ledger.Open(context.Background(), path, ledger.Options{Now: ticking(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// mustOpen creates a new ledger in a temporary folder.
func mustOpen(tb testing.TB) (*ledger.DB, string) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "ledger.db")
	db, err := ledger.Create(context.Background(), path, ledger.Options{Now: ticking(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db, path
}

func payout(ref, amount string, line int) ledger.Payout {
	return ledger.Payout{Ref: ref, Line: line, Recipient: "Ali " + ref, ProviderID: 7, Bank: "Maybank",
		Account: "0123456789", Amount: decimal.RequireFromString(amount), Description: "salary"}
}

func rowOf(p ledger.Payout) ledger.RunRow {
	return ledger.RunRow{Line: p.Line, Ref: p.Ref, Recipient: p.Recipient, ProviderID: p.ProviderID, Bank: p.Bank,
		Account: p.Account, Amount: p.Amount.String(), Description: p.Description}
}

// seed adds a run and records n fresh payouts ref-0..ref-(n-1), each 10.00, on lines 2...
func seed(tb testing.TB, db *ledger.DB, runID string, n int) []ledger.Payout {
	tb.Helper()
	ctx := context.Background()
	if err := db.AddRun(ctx, ledger.Run{ID: runID, Kind: "run", File: runID + ".csv", FileSHA256: "sha-" + runID,
		StartedAt: time.Now(), Status: "running"}); err != nil {
		tb.Fatal(err)
	}
	ps := make([]ledger.Payout, n)
	rows := make([]ledger.RunRow, n)
	for i := range ps {
		ps[i] = payout(fmt.Sprintf("%s-ref-%d", runID, i), "10.00", i+2)
		rows[i] = rowOf(ps[i])
	}
	if err := db.Record(ctx, runID, rows, ps); err != nil {
		tb.Fatal(err)
	}
	return ps
}

func mustGet(tb testing.TB, db *ledger.DB, ref string) ledger.Payout {
	tb.Helper()
	p, err := db.Get(context.Background(), ref)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func mustEvents(tb testing.TB, db *ledger.DB, ref string) []ledger.Event {
	tb.Helper()
	evs, err := db.Events(context.Background(), ref)
	if err != nil {
		tb.Fatal(err)
	}
	return evs
}

// walk is the changes that move ref from READY through states in turn, each a legal move.
func walk(ref string, states ...ledger.State) []ledger.Change {
	changes := make([]ledger.Change, 0, len(states))
	from := ledger.Ready
	for _, s := range states {
		changes = append(changes, ledger.Change{Ref: ref, From: from, To: s})
		from = s
	}
	return changes
}
