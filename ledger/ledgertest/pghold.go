package ledgertest

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/jackc/pgx/v5"
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
