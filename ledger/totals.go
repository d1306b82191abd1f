package ledger

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/shopspring/decimal"
)

// CountAmount is how many payouts are in a state and what they add up to (MYR, exact).
type CountAmount struct {
	Count  int
	Amount decimal.Decimal
}

// Totals is what the ledger holds, counted: its payouts by state and, when asked for, the input
// rows that validation rejected and that were never paid.
type Totals struct {
	States map[State]CountAmount
	// RejectedRows are the rejected input rows never recorded as payouts: a reference rejected
	// in several runs (the same file dropped again) counts once, with its latest amount; a
	// reference later recorded as a payout (the row was fixed and sent) does not count; rows
	// without a reference count once per run and line; an amount that is not a number adds
	// nothing. Zero unless CountRead.RejectedRows.
	RejectedRows CountAmount
}

// CountRead says what Counts reads besides the payouts by state.
type CountRead struct {
	// RejectedRows reads every rejected row (about 3 µs each), where the payouts by state cost
	// the same at any size: only what shows them asks.
	RejectedRows bool
}

// Counts returns the number of payouts and their exact total per state, from the running totals
// that triggers keep in integer sen on every insert, move and delete of a payout, so that it costs
// the same whatever the ledger's size; and with how.RejectedRows, the rejected rows, read in the
// same snapshot, so that the two never disagree about a row a run recorded in between.
func (db *DB) Counts(ctx context.Context, how CountRead) (Totals, error) {
	if !how.RejectedRows {
		states, err := stateTotals(ctx, db.sql)
		return Totals{States: states}, err
	}
	conn, end, err := db.snapshot(ctx)
	if err != nil {
		return Totals{}, fmt.Errorf("count payouts: %w", err)
	}
	defer end()
	var t Totals
	if t.States, err = stateTotals(ctx, conn); err != nil {
		return Totals{}, err
	}
	if t.RejectedRows, err = rejectedRows(ctx, conn); err != nil {
		return Totals{}, err
	}
	return t, nil
}

// rowsQuerier is what a read of several rows runs on: the database, or one connection in a
// read transaction.
type rowsQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func stateTotals(ctx context.Context, q rowsQuerier) (map[State]CountAmount, error) {
	rows, err := q.QueryContext(ctx, `SELECT state, count, sen FROM state_totals WHERE count <> 0`)
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
