package ledger

import (
	"context"
	"database/sql"
	"fmt"
)

// StoreCallback keeps a received callback. A zero ReceivedAt is taken as now. A callback whose
// TokenSHA256 is already stored is a delivery of the same token again: its first row counts it
// (replays) and nothing else is stored, so that a replayed callback costs a counter, not a copy.
func (db *DB) StoreCallback(ctx context.Context, c StoredCallback) error {
	if c.ReceivedAt.IsZero() {
		c.ReceivedAt = db.now()
	}
	detail := "callback received: " + c.Verdict
	err := db.writeSealed(ctx, "callbacks", "", detail, func(tx *sql.Tx) (string, []any, error) {
		var id int64
		err := tx.QueryRowContext(ctx, `INSERT INTO callbacks (received_at, invoice_no, verdict, payload, token_sha256)
			VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (token_sha256) WHERE token_sha256 <> '' DO UPDATE SET replays = callbacks.replays + 1
			RETURNING id`, fmtTime(c.ReceivedAt), c.InvoiceNo, c.Verdict, c.Payload, c.TokenSHA256).Scan(&id)
		return `WHERE id = $1`, []any{id}, err
	})
	if err != nil {
		return fmt.Errorf("store callback: %w", err)
	}
	return nil
}
