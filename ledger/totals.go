package ledger

import (
	"context"
	"fmt"

	"github.com/shopspring/decimal"
)

// CountAmount is how many payouts are in a state and what they add up to (MYR, exact).
type CountAmount struct {
	Count  int
	Amount decimal.Decimal
}

// Counts returns the number of payouts and their exact total per state. It reads the running
// totals that triggers keep in integer sen on every insert, move and delete of a payout, so it
// costs the same whatever the ledger's size.
func (db *DB) Counts(ctx context.Context) (map[State]CountAmount, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT state, count, sen FROM state_totals WHERE count <> 0`)
	if err != nil {
		return nil, fmt.Errorf("count payouts: %w", err)
	}
	defer rows.Close()
	out := make(map[State]CountAmount)
	for rows.Next() {
		var state string
		var count, sen int64
		if err := rows.Scan(&state, &count, &sen); err != nil {
			return nil, fmt.Errorf("count payouts: %w", err)
		}
		out[State(state)] = CountAmount{Count: int(count), Amount: decimal.New(sen, -2)}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count payouts: %w", err)
	}
	return out, nil
}
