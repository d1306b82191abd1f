package ledger

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// The queries here read through an index and return what they are asked for, not the whole
// ledger: the run and reconcile paths and `payout status` call them, and must cost the same
// after years of payouts as on the first day.

// RecentRuns returns the latest n runs, oldest first.
func (db *DB) RecentRuns(ctx context.Context, n int) ([]Run, error) {
	runs, err := db.queryRuns(ctx, recentRunsWhere, n)
	if err != nil {
		return nil, fmt.Errorf("list recent runs: %w", err)
	}
	return runs, nil
}

const recentRunsWhere = `WHERE rowid IN (SELECT rowid FROM runs ORDER BY started_at DESC, rowid DESC LIMIT ?)`

// RunsWithStatus returns the runs whose status is status ("running", say), oldest first.
func (db *DB) RunsWithStatus(ctx context.Context, status RunStatus) ([]Run, error) {
	runs, err := db.queryRuns(ctx, `WHERE status = ?`, status)
	if err != nil {
		return nil, fmt.Errorf("list %s runs: %w", status, err)
	}
	return runs, nil
}

// RunsOfFile returns the runs of the file with this SHA-256, oldest first.
func (db *DB) RunsOfFile(ctx context.Context, sha256 string) ([]Run, error) {
	runs, err := db.queryRuns(ctx, `WHERE file_sha256 = ?`, sha256)
	if err != nil {
		return nil, fmt.Errorf("list runs of file %s: %w", sha256, err)
	}
	return runs, nil
}

// RunsSince returns the runs started at or after since, oldest first.
func (db *DB) RunsSince(ctx context.Context, since time.Time) ([]Run, error) {
	runs, err := db.queryRuns(ctx, `WHERE started_at >= ?`, fmtTime(since))
	if err != nil {
		return nil, fmt.Errorf("list runs since %s: %w", fmtTime(since), err)
	}
	return runs, nil
}

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
		ORDER BY r.started_at DESC, r.rowid DESC, p.line DESC LIMIT ?`
}

// prefixed qualifies every column of a comma-separated list with prefix.
func prefixed(prefix, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = prefix + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}
