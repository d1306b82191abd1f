package ledger

import (
	"context"
	"database/sql"
	"io/fs"
)

// SQLOf exposes the connection pool to the tests, which check pragmas on pooled connections
// and that the database itself refuses to rewrite the audit trail.
func SQLOf(db *DB) *sql.DB { return db.sql }

// RunRows is the rows of RunReport without their payouts, for the tests of Record.
func (db *DB) RunRows(ctx context.Context, runID string) ([]RunRow, error) {
	lines, err := db.RunReport(ctx, runID)
	rows := make([]RunRow, len(lines))
	for i, l := range lines {
		rows[i] = l.Row
	}
	return rows, err
}

// Migrations is how many migrations this build knows: the schema version of a ledger it made.
func Migrations() int {
	names, _ := fs.Glob(migrations, "migrations/*.sql")
	return len(names)
}
