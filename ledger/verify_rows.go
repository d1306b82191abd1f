package ledger

// The parts of VerifyChain beyond the payouts: the state totals recomputed, the rows covered by
// row events compared column by column, and the schema compared with what the migrations make.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// verifyTotals recomputes the count and sum of every state from the payouts (which the replay
// checked against the chain) and compares the running totals with them.
func verifyTotals(ctx context.Context, conn *sql.Conn, rep *ChainReport) error {
	type total struct{ count, sen int64 }
	read := func(query string) (map[string]total, error) {
		out := map[string]total{}
		rows, err := scanAll(ctx, conn, query, func(s scanner) (struct {
			state string
			total
		}, error) {
			var r struct {
				state string
				total
			}
			return r, s.Scan(&r.state, &r.count, &r.sen)
		})
		for _, r := range rows {
			out[r.state] = r.total
		}
		return out, err
	}
	stored, err := read(`SELECT state, count, sen FROM state_totals`)
	if err != nil {
		return err
	}
	actual, err := read(`SELECT state, count(*), COALESCE(SUM(amount_sen), 0) FROM payouts GROUP BY state`)
	if err != nil {
		return err
	}
	for _, s := range keysOfBoth(stored, actual) {
		st, ok := stored[s]
		a := actual[s]
		switch {
		case !ok:
			rep.Findings = append(rep.Findings, Finding{Problem: fmt.Sprintf("state_totals has no row for state %s, which %d payouts are in (deleted by hand)", s, a.count)})
		case st.count != a.count:
			rep.Findings = append(rep.Findings, Finding{Problem: fmt.Sprintf("state_totals row of state %s: count is %d, the payouts table has %d (edited by hand)", s, st.count, a.count)})
		}
		if ok && st.sen != a.sen {
			rep.Findings = append(rep.Findings, Finding{Problem: fmt.Sprintf("state_totals row of state %s: sen is %d, the payouts in that state add up to %d (edited by hand)", s, st.sen, a.sen)})
		}
	}
	return nil
}

// rowEntry is the latest row event of a covered row.
type rowEntry struct {
	id               int64
	ref, facts, salt string
}

// verifyRowTable compares every row of t with its latest row event, column by column, reading
// both in key order side by side.
func verifyRowTable(ctx context.Context, e *engine, conn, other *sql.Conn, t *rowTable, rep *ChainReport) error {
	cols, err := tableColumns(ctx, e, conn, t.name)
	if err != nil {
		return err
	}
	type row struct {
		key  string
		vals []string
	}
	rRows, err := conn.QueryContext(ctx, t.quotedRowsSQL(e, cols, `ORDER BY `+t.order))
	if err != nil {
		return err
	}
	defer rRows.Close()
	eRows, err := other.QueryContext(ctx, `SELECT id, ref, facts, payload FROM row_events WHERE ref >= $1 AND ref < $2 ORDER BY ref, id`,
		t.name+"/", t.name+"0") // '0' follows '/': every ref of the table
	if err != nil {
		return err
	}
	defer eRows.Close()
	rows := &stream[row]{rows: rRows, scan: func(s scanner) (row, error) {
		k, v, err := scanQuoted(s, len(cols))
		return row{k, v}, err
	}}
	entries := &stream[rowEntry]{rows: eRows, scan: func(s scanner) (rowEntry, error) {
		var e rowEntry
		return e, s.Scan(&e.id, &e.ref, &e.facts, &e.salt)
	}}
	rows.advance()
	entries.advance()
	prefix := t.name + "/"
	for rows.next != nil || entries.next != nil {
		switch {
		case rows.next == nil || entries.next != nil && entries.next.ref < prefix+rows.next.key:
			g := entries.group(func(e *rowEntry) string { return e.ref })
			rep.Findings = append(rep.Findings, Finding{Problem: fmt.Sprintf("%s row %s: row event %d records it, but it is not in the table (deleted by hand)",
				t.name, strings.TrimPrefix(g[0].ref, prefix), g[len(g)-1].id)})
		case entries.next == nil || prefix+rows.next.key < entries.next.ref:
			rep.Findings = append(rep.Findings, Finding{Problem: fmt.Sprintf("%s row %s: no row event records it (inserted by hand)", t.name, rows.next.key)})
			rows.advance()
		default:
			g := entries.group(func(e *rowEntry) string { return e.ref })
			for _, p := range t.compare(cols, rows.next.vals, g[len(g)-1]) {
				rep.Findings = append(rep.Findings, Finding{Problem: fmt.Sprintf("%s row %s: %s", t.name, rows.next.key, p)})
			}
			rows.advance()
		}
		if rows.err != nil || entries.err != nil {
			return errors.Join(rows.err, entries.err)
		}
	}
	return nil
}

// compare lists the columns of a row that differ from its latest row event.
func (t *rowTable) compare(cols, vals []string, e rowEntry) []string {
	if t.rowFacts(cols, vals, e.salt) == e.facts {
		return nil // the common case, without parsing the facts
	}
	facts := decodeFacts(e.facts)
	var out []string
	for i, c := range cols {
		want, ok := facts[c]
		delete(facts, c)
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("column %s is %s, row event %d does not record it (added by hand)", c, vals[i], e.id))
		case t.personal[c] && personalDigest(e.salt, t.name, c, vals[i]) != want:
			out = append(out, fmt.Sprintf("column %s does not match the digest of row event %d (edited by hand, or that row event's salt in row_events.payload was)", c, e.id))
		case !t.personal[c] && vals[i] != want:
			out = append(out, fmt.Sprintf("column %s is %s, row event %d says %s (edited by hand)", c, vals[i], e.id, want))
		}
	}
	for c := range facts {
		out = append(out, fmt.Sprintf("column %s, which row event %d records, is gone (dropped by hand)", c, e.id))
	}
	sort.Strings(out)
	return out
}

// attestFact marks the event that brought a payout's times and counters into the chain when the
// ledger was upgraded: it records them as the row held them then.
const attestFact = "attested"

// keysOfBoth is every key of a and of b, once each, sorted: what two readings of one thing (the
// stored and the recomputed, the wanted and the found) are compared over.
func keysOfBoth[V any](a, b map[string]V) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
