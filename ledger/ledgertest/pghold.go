package ledgertest

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/payout/payout/ledger"
)

// HoldSchema makes, in the PostgreSQL database at url, the registry of processes that a hold
// (ledger.Take) registers in, from the migration ledger.Create applies for it; for tests of
// holds on a database no ledger was created in.
func HoldSchema(tb testing.TB, url string) {
	tb.Helper()
	_, here, _, _ := runtime.Caller(0)
	ddl, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "migrations", "postgres", "0002_processes.sql"))
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, string(ddl)); err != nil {
		tb.Fatalf("make the processes table: %v", err)
	}
}

// TakeHold starts a paying process's hold on the PostgreSQL ledger at url, as Engine.Hold does
// for an engine whose processes share a ledger: ok is always true, and Release ends the hold as
// the process's end would.
func TakeHold(tb testing.TB, url string) (Holder, bool) {
	tb.Helper()
	h, err := ledger.Take(context.Background(), url)
	if err != nil {
		tb.Fatal(err)
	}
	release := func() {
		if err := h.Close(); err != nil {
			tb.Error(err)
		}
	}
	tb.Cleanup(func() { _ = h.Close() })
	return Holder{Claimant: h.Self().Claimant(), Alive: h, Release: release}, true
}
