package ledger

import (
	"context"
	"fmt"
)

// purgedTables are the tables a purge masks personal data in.
const purgedTables = "payouts, run_rows, events, row_events, callbacks, payout_salts"

// vacuumPurged rewrites the tables a purge masks in from their live rows, so that the old
// versions of the masked rows are not left in their files. VACUUM runs outside a transaction,
// and holds each table exclusively while it rewrites it.
func (db *DB) vacuumPurged(ctx context.Context) error {
	if _, err := db.sql.ExecContext(ctx, "VACUUM FULL "+purgedTables); err != nil {
		return fmt.Errorf("forget: VACUUM FULL: %w", err)
	}
	return nil
}
