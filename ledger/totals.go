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

// Totals is what the ledger holds, counted: its payouts by state, and apart from them the input
// rows that validation rejected, which are never payouts (see Counts).
type Totals struct {
	ByState  map[State]CountAmount
	Rejected CountAmount
}

// Counts returns the number of payouts and their exact total per state, and the rejected input
// rows that were never paid. The payouts' totals are the running totals that triggers keep in
// integer sen on every insert, move and delete of a payout, so they cost the same whatever the
// ledger's size. The rejected rows are counted from the runs' rows (rejectedRows), which grows with
// them: about 3 µs a rejected row.
func (db *DB) Counts(ctx context.Context) (Totals, error) {
	byState, err := db.countsByState(ctx)
	if err != nil {
		return Totals{}, err
	}
	rejected, err := db.rejectedRows(ctx)
	if err != nil {
		return Totals{}, err
	}
	return Totals{ByState: byState, Rejected: rejected}, nil
}

// countsByState reads the running totals of the payouts, by state.
func (db *DB) countsByState(ctx context.Context) (map[State]CountAmount, error) {
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
