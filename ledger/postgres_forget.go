package ledger

import (
	"context"
	"fmt"
)

// purgedTables are the tables a purge masks personal data in.
const purgedTables = "payouts, run_rows, events, row_events, callbacks, payout_salts"

// vacuumPurged rewrites the tables a purge masks in from their live rows, so that the old
// versions of the masked rows are not left in their files, and gathers their statistics again:
// pg_statistic keeps sample values of each column (account numbers, names) from the last
// ANALYZE, which autovacuum runs on its own; it is then rewritten too. VACUUM runs outside a
// transaction, and holds each table exclusively while it rewrites it. The server skips, with
// only a warning, a table its role may not vacuum: a role that neither owns the database nor is
// a member of its owner is refused first, so that a purge never says it wiped what it did not.
func (db *DB) vacuumPurged(ctx context.Context) error {
	var owner bool
	if err := db.sql.QueryRowContext(ctx, `SELECT pg_has_role(current_user, datdba, 'USAGE') FROM pg_database
		WHERE datname = current_database()`).Scan(&owner); err != nil {
		return fmt.Errorf("forget: %w", err)
	}
	if !owner {
		return fmt.Errorf("forget: the ledger's role does not own its database, and only the owner may rewrite the tables and the server's statistics (pg_statistic) that keep old copies; " +
			"make the role the database's owner (ALTER DATABASE ... OWNER TO it), or have the owner run VACUUM FULL " + purgedTables + ", pg_statistic")
	}
	for _, stmt := range []string{"VACUUM (FULL, ANALYZE) " + purgedTables, "VACUUM FULL pg_catalog.pg_statistic"} {
		if _, err := db.sql.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("forget: %s: %w", stmt, err)
		}
	}
	return nil
}
