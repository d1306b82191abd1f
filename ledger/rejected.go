package ledger

import (
	"context"
	"fmt"

	"github.com/shopspring/decimal"
)

// rejectedRows counts the input rows that validation rejected and that were never paid
// (Totals.RejectedRows): a rejected row is kept only among its run's rows, never as a payout.
func rejectedRows(ctx context.Context, q rowsQuerier) (CountAmount, error) {
	rows, err := q.QueryContext(ctx, `SELECT r.run_id, r.line, r.ref, r.amount FROM run_rows r
		WHERE r.rejected = 1 AND NOT EXISTS (SELECT 1 FROM payouts p WHERE p.ref = r.ref)
		ORDER BY r.run_id, r.line`)
	if err != nil {
		return CountAmount{}, fmt.Errorf("count rejected rows: %w", err)
	}
	defer rows.Close()
	latest := make(map[string]decimal.Decimal)
	for rows.Next() {
		var runID, ref, amount string
		var line int
		if err := rows.Scan(&runID, &line, &ref, &amount); err != nil {
			return CountAmount{}, fmt.Errorf("count rejected rows: %w", err)
		}
		key := "ref\x00" + ref
		if ref == "" {
			key = fmt.Sprintf("line\x00%s\x00%d", runID, line)
		}
		d, ok := AmountAsWritten(amount)
		if !ok {
			d = decimal.Zero
		}
		latest[key] = d
	}
	if err := rows.Err(); err != nil {
		return CountAmount{}, fmt.Errorf("count rejected rows: %w", err)
	}
	out := CountAmount{Amount: decimal.Zero}
	for _, d := range latest {
		out.Count++
		out.Amount = out.Amount.Add(d)
	}
	return out, nil
}
