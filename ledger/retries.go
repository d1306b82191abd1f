package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Retry is a reference derived to pay again a payout the service refused: New pays what Old
// would have paid.
type Retry struct {
	New, Old string
	RunID    string // the run whose retry file first offered New
}

// maxRetryChain bounds how far retryRoot follows retries back: far beyond any real chain, it
// only stops a damaged table from looping.
const maxRetryChain = 1000

// retryRoot is the reference that ref is, through any number of retries, a retry of: ref itself
// when it is no retry.
func retryRoot(ctx context.Context, q querier, ref string) (string, error) {
	for range maxRetryChain {
		var old string
		err := q.QueryRowContext(ctx, `SELECT old_ref FROM retries WHERE new_ref = $1`, ref).Scan(&old)
		if errors.Is(err, sql.ErrNoRows) {
			return ref, nil
		}
		if err != nil {
			return "", fmt.Errorf("retries of %s: %w", ref, err)
		}
		ref = old
	}
	return "", fmt.Errorf("retries of %s: a chain longer than %d", ref, maxRetryChain)
}

// ClaimRetry returns the retry of old, recording one when there is none: the first of
// candidate(root, 1), candidate(root, 2), ... that no payout and no other retry holds, where
// root is the reference old is, through any number of retries, a retry of (old itself when it
// is no retry). A payout has at most one retry, so every caller asking for the same payout gets
// the same reference.
func (db *DB) ClaimRetry(ctx context.Context, old, runID string, now time.Time, candidate func(root string, n int) string) (Retry, error) {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return Retry{}, fmt.Errorf("retry of %s: %w", old, err)
	}
	defer tx.Rollback()
	r := Retry{Old: old}
	err = tx.QueryRowContext(ctx, `SELECT new_ref, run_id FROM retries WHERE old_ref = $1`, old).Scan(&r.New, &r.RunID)
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return Retry{}, fmt.Errorf("retry of %s: %w", old, err)
	}
	root, err := retryRoot(ctx, tx, old)
	if err != nil {
		return Retry{}, err
	}
	for n := 1; n <= maxRetryChain; n++ {
		ref := candidate(root, n)
		var taken bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM payouts WHERE ref = $1)
			OR EXISTS (SELECT 1 FROM retries WHERE new_ref = $2)`, ref, ref).Scan(&taken); err != nil {
			return Retry{}, fmt.Errorf("retry of %s: %w", old, err)
		}
		if taken {
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO retries (new_ref, old_ref, run_id, created_at) VALUES ($1, $2, $3, $4)`,
			ref, old, runID, fmtTime(now)); err != nil {
			return Retry{}, fmt.Errorf("retry of %s: %w", old, err)
		}
		head, err := readChainHead(ctx, tx)
		if err != nil {
			return Retry{}, fmt.Errorf("retry of %s: %w", old, err)
		}
		if _, err := sealRows(ctx, tx, db.newChainer(head), "retries", runID, fmtTime(db.now()),
			"retry reference claimed", `WHERE new_ref = $1`, ref); err != nil {
			return Retry{}, fmt.Errorf("retry of %s: %w", old, err)
		}
		if err := tx.Commit(); err != nil {
			return Retry{}, fmt.Errorf("retry of %s: %w", old, err)
		}
		return Retry{New: ref, Old: old, RunID: runID}, nil
	}
	return Retry{}, fmt.Errorf("retry of %s: no free reference among %d candidates", old, maxRetryChain)
}

// RetryFilter names retries by one of their references: New, the references they pay under, or
// Old, the payouts they retry. Retries keys what it returns by the references the filter names.
type RetryFilter struct {
	New []string
	Old []string
}

// Retries returns the retries the filter names, keyed by the references it names them by.
func (db *DB) Retries(ctx context.Context, f RetryFilter) (map[string]Retry, error) {
	column, refs, key := "new_ref", f.New, func(r Retry) string { return r.New }
	if len(f.Old) > 0 {
		if len(f.New) > 0 {
			return nil, errors.New("retries: a filter names them by New or by Old, not both")
		}
		column, refs, key = "old_ref", f.Old, func(r Retry) string { return r.Old }
	}
	out := make(map[string]Retry)
	if len(refs) == 0 {
		return out, nil
	}
	where, list, what := column+` IN `+db.eng.inJSONList(), any(jsonList(refs)), "retries"
	if len(refs) == 1 {
		// One probe of the column's index: a JSON list of one would double its cost, and retry
		// files and reconcile ask of one payout at a time.
		where, list, what = column+` = $1`, refs[0], "retries naming "+refs[0]
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT new_ref, old_ref, run_id FROM retries WHERE `+where, list)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r Retry
		if err := rows.Scan(&r.New, &r.Old, &r.RunID); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out[key(r)] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}
