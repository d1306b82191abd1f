package ledger

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
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
func Migrations() int { return LatestMigration() }

// SchemaDigest names the schema this build makes: a digest of its migrations.
func SchemaDigest() string {
	names, _ := fs.Glob(migrations, "migrations/*.sql")
	h := sha256.New()
	for _, name := range names {
		body, _ := migrations.ReadFile(name)
		h.Write(body)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}
