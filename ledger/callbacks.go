package ledger

import (
	"context"
	"fmt"
)

// StoreCallback keeps a received callback. A zero ReceivedAt is taken as now.
func (db *DB) StoreCallback(ctx context.Context, c StoredCallback) error {
	if c.ReceivedAt.IsZero() {
		c.ReceivedAt = db.now()
	}
	_, err := db.sql.ExecContext(ctx, `INSERT INTO callbacks (received_at, invoice_no, verdict, payload) VALUES (?, ?, ?, ?)`,
		fmtTime(c.ReceivedAt), c.InvoiceNo, c.Verdict, c.Payload)
	if err != nil {
		return fmt.Errorf("store callback: %w", err)
	}
	return nil
}
