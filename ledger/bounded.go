package ledger

import (
	"context"
	"fmt"
	"strings"
)

// The queries here read through an index and return what they are asked for, not the whole
// ledger: the run and reconcile paths and `payout status` call them, and must cost the same
// after years of payouts as on the first day.

// LatestInStates returns up to n payouts in one of states, from the latest runs first (by the
// runs' start, then line, descending).
func (db *DB) LatestInStates(ctx context.Context, n int, states ...State) ([]Payout, error) {
	if len(states) == 0 || n <= 0 {
		return nil, nil
	}
	args := make([]any, 0, len(states)+1)
	for _, s := range states {
		args = append(args, string(s))
	}
	args = append(args, n)
	ps, err := db.queryPayouts(ctx, latestInStatesSQL(len(states)), args...)
	if err != nil {
		return nil, fmt.Errorf("latest payouts: %w", err)
	}
	return ps, nil
}

// latestInStatesSQL walks the runs from the latest, and each run's payouts by line, so that it
// stops after the first n matches instead of sorting the ledger.
func latestInStatesSQL(states int) string {
	return `SELECT ` + prefixed("p.", payoutColumns) + ` FROM runs r CROSS JOIN payouts p ON p.run_id = r.id
		WHERE p.state IN (?` + strings.Repeat(",?", states-1) + `)
		ORDER BY r.started_at DESC, r.` + insertionOrder + ` DESC, p.line DESC LIMIT ?`
}

// prefixed qualifies every column of a comma-separated list with prefix.
func prefixed(prefix, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = prefix + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}
