package ledger

import "database/sql"

// SQLOf exposes the connection pool to the tests, which check pragmas on pooled connections
// and that the database itself refuses to rewrite the audit trail.
func SQLOf(db *DB) *sql.DB { return db.sql }
