package ledger_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/internal/fakeclock"
	"github.com/payout/payout/ledger"
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
// mustOpen is a new ledger for the test, on the ticking clock: a copy of the one Create made
// once for the test process, opened with the clock moved on by the readings Create took, so it
// stands as Create left it. Under the race detector Create is 0.3 s of CPU, and most tests start
// from a new ledger; the tests of creating one call Create themselves.
func mustOpen(tb testing.TB) (*ledger.DB, string) {
	tb.Helper()
	newLedger.once.Do(func() { newLedger.file, newLedger.ticks, newLedger.err = createdLedger() })
	if newLedger.err != nil {
		tb.Fatal(newLedger.err)
	}
	path := filepath.Join(tb.TempDir(), "ledger.db")
	if err := os.WriteFile(path, newLedger.file, 0o600); err != nil {
		tb.Fatal(err)
	}
	now := ticking()
	for range newLedger.ticks {
		now()
	}
	db, err := ledger.Open(context.Background(), path, ledger.Options{Now: now, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db, path
}

// newLedger is the file of a ledger Create made on the ticking clock, and how often it read it.
var newLedger struct {
	once  sync.Once
	file  []byte
	ticks int
	err   error
}

func createdLedger() ([]byte, int, error) {
	dir, err := os.MkdirTemp("", "ledger-test-")
	if err != nil {
		return nil, 0, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "ledger.db")
	ticks, now := 0, ticking()
	counted := func() time.Time {
		ticks++
		return now()
	}
	db, err := ledger.Create(context.Background(), path, ledger.Options{Now: counted, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, 0, err
	}
	if err := db.Close(); err != nil {
		return nil, 0, err
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		return nil, 0, fmt.Errorf("a new ledger left %s-wal after it was closed", path)
	}
	file, err := os.ReadFile(path)
	return file, ticks, err
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
