package ledger

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// WalkPayouts and WalkRunLines read a set of payouts, or a run's lines, a page at a time, in the
// order List and RunReport give them (by run, then line), so that a caller walks a scope of any
// size holding one page. Each page is its own short read: the caller may write between pages.

// where is f's WHERE condition over payouts "p", its parameters numbered from $first; TRUE
// when f selects every payout.
func (s Filter) where(first int) (string, []any) {
	var where []string
	var args []any
	param := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(first+len(args)-1)
	}
	if len(s.States) > 0 {
		in := make([]string, len(s.States))
		for i, st := range s.States {
			in[i] = param(string(st))
		}
		where = append(where, `p.state IN (`+strings.Join(in, ", ")+`)`)
	}
	if !s.CreatedSince.IsZero() {
		where = append(where, `p.created_at >= `+param(fmtTime(s.CreatedSince)))
	}
	if !s.RefusedSince.IsZero() {
		// The index's own WHERE, which SQLite needs to use it.
		where = append(where, `p.state = 'FAILED' AND p.invoice_no = '' AND p.updated_at >= `+param(fmtTime(s.RefusedSince)))
	}
	if len(where) == 0 {
		return "TRUE", nil
	}
	return strings.Join(where, " AND "), args
}

// WalkPayouts calls fn with each payout of the set, by run, then line, reading page payouts at a
// time; no read is open while fn runs.
func (db *DB) WalkPayouts(ctx context.Context, set Filter, page int, fn func(Payout) error) error {
	if set.Latest != 0 {
		return fmt.Errorf("walk payouts: Latest is for List, which reads the latest first")
	}
	runs, err := db.runsHolding(ctx, set)
	if err != nil {
		return err
	}
	for _, runID := range runs {
		line, ref := 0, ""
		for {
			ps, err := db.runPayoutsAfter(ctx, runID, set, line, ref, page)
			if err != nil {
				return err
			}
			for _, p := range ps {
				if err := fn(p); err != nil {
					return err
				}
			}
			if len(ps) < page {
				break
			}
			line, ref = ps[len(ps)-1].Line, ps[len(ps)-1].Ref
		}
	}
	return nil
}

// WalkRunLines calls fn with each of a run's lines, as EachRunLine gives them, reading page lines
// at a time; no read is open while fn runs.
func (db *DB) WalkRunLines(ctx context.Context, runID string, page int, fn func(ReportLine) error) error {
	last, err := db.runLastLine(ctx, runID)
	if err != nil {
		return err
	}
	for from := 0; from <= last; from += page {
		lines, err := db.runLinesBetween(ctx, runID, from, from+page)
		if err != nil {
			return err
		}
		for _, l := range lines {
			if err := fn(l); err != nil {
				return err
			}
		}
	}
	return nil
}

// runsHolding returns the runs that recorded a payout of the set, in the order List gives their
// payouts: by the run's start, then its id.
func (db *DB) runsHolding(ctx context.Context, set Filter) ([]string, error) {
	query, args := db.eng.runsHoldingSQL(set)
	rows, err := db.sql.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("runs holding payouts: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("runs holding payouts: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("runs holding payouts: %w", err)
	}
	return ids, nil
}

// runsHoldingSQL is runsHolding's query of set, and its parameters.
func (e *engine) runsHoldingSQL(set Filter) (string, []any) {
	where, args := set.where(1)
	index := ""
	if !set.RefusedSince.IsZero() {
		// Otherwise SQLite prefers payouts_by_state, which holds every FAILED payout ever.
		index = e.indexedBy("payouts_refused")
	}
	return `SELECT h.run_id FROM (SELECT DISTINCT p.run_id FROM payouts p` + index + ` WHERE ` + where + `) h
		LEFT JOIN runs r ON r.id = h.run_id ORDER BY r.started_at, h.run_id`, args
}

// runPayoutsAfter returns up to n payouts of the set that run recorded, after the position
// (line, ref) in the order of line then ref: a page of List's order. The first page is after
// (0, "").
func (db *DB) runPayoutsAfter(ctx context.Context, runID string, set Filter, line int, ref string, n int) ([]Payout, error) {
	where, args := set.where(4)
	q := `SELECT ` + prefixed("p.", payoutColumns) + ` FROM payouts p` + db.eng.indexedBy("payouts_by_run") + `
		WHERE p.run_id = $1 AND (p.line, p.ref) > ($2, $3) AND ` + where + ` ORDER BY p.line, p.ref LIMIT $` + strconv.Itoa(4+len(args))
	ps, err := db.queryPayouts(ctx, q, append(append([]any{runID, line, ref}, args...), n)...)
	if err != nil {
		return nil, fmt.Errorf("payouts of run %s: %w", runID, err)
	}
	return ps, nil
}

// runLastLine returns the last line number a report of the run has (see EachRunLine); 0 when it
// has none.
func (db *DB) runLastLine(ctx context.Context, runID string) (int, error) {
	var last int
	err := db.sql.QueryRowContext(ctx, `SELECT `+db.eng.greatest(`COALESCE((SELECT max(line) FROM run_rows WHERE run_id = $1), 0)`,
		`COALESCE((SELECT max(p.line) FROM runs s CROSS JOIN runs o`+db.eng.indexedBy("runs_by_source")+`
		`+db.eng.joinInOrder+`payouts p`+db.eng.indexedBy("payouts_by_run")+` ON p.run_id = o.id
		WHERE s.id = $1 AND o.source = s.source AND o.source <> '' AND o.started_at <= s.started_at), 0)`), runID).Scan(&last)
	if err != nil {
		return 0, fmt.Errorf("last line of run %s: %w", runID, err)
	}
	return last, nil
}

// runLinesBetween returns the run's lines from line from up to, not including, line to, in line
// order: what EachRunLine gives of them.
func (db *DB) runLinesBetween(ctx context.Context, runID string, from, to int) ([]ReportLine, error) {
	rows, err := db.sql.QueryContext(ctx, db.eng.runLinesQuery(payoutColumns, true), runID, from, to)
	if err != nil {
		return nil, fmt.Errorf("report of run %s: %w", runID, err)
	}
	defer rows.Close()
	var out []ReportLine
	for rows.Next() {
		line, err := scanReportLine(rows, scanPayout)
		if err != nil {
			return nil, fmt.Errorf("report of run %s: %w", runID, err)
		}
		out = append(out, line)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("report of run %s: %w", runID, err)
	}
	return out, nil
}
