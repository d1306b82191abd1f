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

// Callbacks returns the stored callbacks, oldest first.
func (db *DB) Callbacks(ctx context.Context) ([]StoredCallback, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT id, received_at, invoice_no, verdict, payload FROM callbacks ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list callbacks: %w", err)
	}
	defer rows.Close()
	var out []StoredCallback
	for rows.Next() {
		var c StoredCallback
		var at string
		if err := rows.Scan(&c.ID, &at, &c.InvoiceNo, &c.Verdict, &c.Payload); err != nil {
			return nil, fmt.Errorf("list callbacks: %w", err)
		}
		if c.ReceivedAt, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("list callbacks: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list callbacks: %w", err)
	}
	return out, nil
}
