package ledger

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// WalkPayouts is the one way to read payouts by a Filter. It reads them a page at a time, by run,
// then line, so that a caller walks a scope of any size holding one page. Each page is its own
// short read: the caller may write between pages. RunLines reads a run's lines so too. The few
// payouts an index names (an invoice number, an account and amount) and the latest few of a set
// are one short read.

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
	if s.InvoiceNo != "" {
		// The index's own WHERE, which SQLite needs to use it.
		where = append(where, `p.invoice_no = `+param(s.InvoiceNo)+` AND p.invoice_no <> ''`)
	}
	if s.Account != "" {
		// payouts_by_payee_digits's own expression, which SQLite needs to use it.
		where = append(where, `ltrim(p.account, '0') = `+param(AccountDigits(s.Account))+` AND p.amount = `+param(amountText(s.Amount)))
	}
	if len(where) == 0 {
		return "TRUE", nil
	}
	return strings.Join(where, " AND "), args
}

// WalkPayouts calls fn with each payout of the set, by run, then line, reading page payouts at a
// time; no read is open while fn runs. A set an index names (set.InvoiceNo, set.Account) is read
// at once, in the same order; with set.Latest, fn gets the latest set.Latest payouts of the set,
// latest first, read at once. page does not matter then. An error from fn ends the walk and is
// returned as it is.
func (db *DB) WalkPayouts(ctx context.Context, set Filter, page int, fn func(Payout) error) error {
	switch {
	case set.Latest < 0:
		return fmt.Errorf("walk payouts: Latest %d is below zero", set.Latest)
	case set.Latest > 0 || set.InvoiceNo != "" || set.Account != "":
		q, args := db.eng.atOnceSQL(set)
		ps, err := db.queryPayouts(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("payouts: %w", err)
		}
		for _, p := range ps {
			if err := fn(p); err != nil {
				return err
			}
		}
		return nil
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

// runsHolding returns the runs that recorded a payout of the set, in the order WalkPayouts gives
// their payouts: by the run's start, then its id.
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
// (line, ref) in the order of line then ref: a page of WalkPayouts' order. The first page is
// after (0, "").
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

// atOnceSQL is the query of a set read at once, and its parameters: the latest set.Latest, or
// the few payouts an index names, by run, then line.
func (e *engine) atOnceSQL(set Filter) (string, []any) {
	if set.Latest > 0 {
		return e.latestSQL(set)
	}
	where, args := set.where(1)
	index := ""
	if set.InvoiceNo == "" {
		// Otherwise SQLite may read the payouts of every pending state to find one account's.
		index = e.indexedBy("payouts_by_payee_digits")
	}
	return `SELECT ` + prefixed("p.", payoutColumns) + ` FROM payouts p` + index + ` WHERE ` + where + `
		ORDER BY (SELECT started_at FROM runs WHERE runs.id = p.run_id), p.run_id, p.line, p.ref`, args
}

// latestSQL is the query of the latest set.Latest payouts of the set, from the latest run's last
// line back, and its parameters. It walks the runs from the latest, and each run's payouts by
// line, so that it stops after the first n matches instead of sorting the ledger.
func (e *engine) latestSQL(set Filter) (string, []any) {
	where, args := set.where(1)
	return `SELECT ` + prefixed("p.", payoutColumns) + ` FROM runs r` + e.joinInOrder + `payouts p ON p.run_id = r.id
		WHERE ` + where + ` ORDER BY r.started_at DESC, r.` + e.insertionOrder + ` DESC, p.line DESC LIMIT $` + strconv.Itoa(len(args)+1), append(args, set.Latest)
}
