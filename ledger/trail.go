package ledger

// The chain's coverage of the tables that a payout's events cannot tell. Every write of a row
// of such a table appends a row event: the row's columns as SQLite's quote() prints them, the
// personal ones as salted digests. `payout audit verify` compares each row with its latest row
// event, column by column, so that a hand edit is named by table, column and key.

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// rowTable is a table whose rows the chain covers through row events.
type rowTable struct {
	name     string
	key      func(e *engine) string // SQL: the row's key as text, unique in the table, in the order verify reads
	order    string                 // SQL: an order of the rows that is the keys' order as text, by an index if one serves
	personal map[string]bool        // columns held in the chain as salted digests, which purge can forget
}

// rowTables are the tables covered by row events. A table added to the ledger is added here (or
// to coverage with how else it is covered): the schema test fails until it is.
var rowTables = []rowTable{
	{name: "runs", key: column("id"), order: "id"},
	// A run's id may hold characters that sort before '/': the lines are read in their keys' order.
	{name: "run_rows", key: func(e *engine) string { return "run_id || '/' || " + e.zeroPadded("line", 9) }, order: "1",
		personal: map[string]bool{"recipient": true, "account": true}},
	{name: "callbacks", key: padded("id", 12), order: "id", personal: map[string]bool{"payload": true}},
	{name: "retries", key: column("new_ref"), order: "new_ref"},
	{name: "approvals", key: padded("id", 12), order: "id"},
	{name: "approved_runs", key: column("run_id"), order: "run_id"},
}

func column(name string) func(*engine) string { return func(*engine) string { return name } }

func padded(name string, width int) func(*engine) string {
	return func(e *engine) string { return e.zeroPadded(name, width) }
}

// coverage says how `payout audit verify` covers each table of the ledger.
var coverage = map[string]string{
	"payouts":      "every column replayed from the payout's events and compared",
	"events":       "the hash chain",
	"row_events":   "the hash chain",
	"payout_salts": "the salted digests of the payout's events: an edited salt fails them",
	"state_totals": "recomputed from the payouts and compared",
	// SQLite's own counters of AUTOINCREMENT ids: an edit changes only the id the next callback,
	// approval or event gets, never a row that is there, and the chain numbers events itself.
	"sqlite_sequence": "not covered: SQLite's counter of the next AUTOINCREMENT id, no money or display",
	// PostgreSQL's record of the migrations applied. The tables that PostgreSQL's later
	// migrations add without a schema version (the paying processes' registry, the shared rate
	// limiter) are no money and outside the trail too: VerifyChain compares their definitions
	// with the migrations' and holds them to no coverage (postgres_schema.go).
	"ledger_migrations": "not covered: the PostgreSQL migrations applied, no money or display",
	// The web console's sessions: a row lets a browser act as a person only while that person's
	// passkey line is in the allowed signers, which the database does not hold; every sign-in
	// and signature it leads to is an event of the chain.
	"console_sessions": "not covered: the web console's open sessions, by a digest of their tokens, no money or display",
}

func init() {
	for _, t := range rowTables {
		coverage[t.name] = "row events, column by column"
	}
}

// Coverage returns, for every table the ledger's schema makes, how `payout audit verify` covers it.
func Coverage() map[string]string {
	out := make(map[string]string, len(coverage))
	for k, v := range coverage {
		out[k] = v
	}
	return out
}

func rowTableNamed(name string) *rowTable {
	for i := range rowTables {
		if rowTables[i].name == name {
			return &rowTables[i]
		}
	}
	panic("ledger: no row table " + name)
}

// txQuerier is a transaction or a connection, for reads of several rows.
type txQuerier interface {
	querier
	preparer
	rowsQuerier
}

// tableColumns are a table's columns, in table order (generated columns are not listed: they
// are computed from the others).
func tableColumns(ctx context.Context, e *engine, q txQuerier, table string) ([]string, error) {
	return scanAll(ctx, q, e.tableColumnsSQL, func(s scanner) (string, error) {
		var n string
		return n, s.Scan(&n)
	}, table)
}

// quotedRowsSQL selects the key and every column, quoted, of the rows of t that match where.
func (t *rowTable) quotedRowsSQL(e *engine, cols []string, where string) string {
	var b strings.Builder
	b.WriteString(`SELECT ` + t.key(e))
	for _, c := range cols {
		b.WriteString(`, ` + e.quoted(c))
	}
	b.WriteString(` FROM "` + t.name + `" ` + where)
	return b.String()
}

// scanQuoted reads a row of quotedRowsSQL: its key and its columns' quoted values.
func scanQuoted(s scanner, n int) (string, []string, error) {
	vals := make([]string, n)
	dest := make([]any, n+1)
	var key string
	dest[0] = &key
	for i := range vals {
		dest[i+1] = &vals[i]
	}
	return key, vals, s.Scan(dest...)
}

// rowFacts are what a row event holds of a row: each column's quoted value, a personal column's
// as its salted digest.
func (t *rowTable) rowFacts(cols, vals []string, salt string) string {
	m := make(map[string]string, len(cols))
	for i, c := range cols {
		m[c] = vals[i]
		if t.personal[c] {
			m[c] = personalDigest(salt, t.name, c, vals[i])
		}
	}
	return factsJSON(m)
}

// sealRows appends a row event for every row of table that matches where: the row as it stands
// now, inside the caller's write transaction. It returns how many it sealed.
func sealRows(ctx context.Context, q txQuerier, c *chainer, table, runID, now, detail, where string, args ...any) (int, error) {
	t := rowTableNamed(table)
	cols, err := tableColumns(ctx, c.eng, q, t.name)
	if err != nil {
		return 0, fmt.Errorf("seal %s: %w", t.name, err)
	}
	type row struct {
		key  string
		vals []string
	}
	rows, err := scanAll(ctx, q, t.quotedRowsSQL(c.eng, cols, where), func(s scanner) (row, error) {
		k, v, err := scanQuoted(s, len(cols))
		return row{k, v}, err
	}, args...)
	if err != nil {
		return 0, fmt.Errorf("seal %s: %w", t.name, err)
	}
	// Several rows to a statement: a run's exceptional lines are sealed a chunk at a time.
	ins := &multiRowInsert{eng: c.eng, prep: q, width: 14, head: `INSERT INTO row_events (` + eventColumns + `) VALUES `}
	defer ins.close()
	values := make([]any, 0, 14*len(rows))
	for _, r := range rows {
		salt := ""
		if len(t.personal) > 0 {
			salt = newSalt()
		}
		e := &ChainEvent{Ref: t.name + "/" + r.key, RunID: runID, At: now, Detail: detail,
			Facts: t.rowFacts(cols, r.vals, salt), Payload: salt}
		c.link(e)
		values = eventArgs(values, e)
	}
	if err := ins.exec(ctx, values); err != nil {
		return 0, fmt.Errorf("seal %s: %w", t.name, err)
	}
	return len(rows), nil
}

// writeSealed runs write and seals the rows it wrote, in one write transaction: write returns the
// where clause and arguments that select them.
func (db *DB) writeSealed(ctx context.Context, table, runID, detail string,
	write func(tx *sql.Tx) (where string, args []any, err error)) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	where, args, err := write(tx)
	if err != nil {
		return err
	}
	head, err := readChainHead(ctx, tx)
	if err != nil {
		return err
	}
	if _, err := sealRows(ctx, tx, db.newChainer(head), table, runID, fmtTime(db.now()), detail, where, args...); err != nil {
		return err
	}
	return tx.Commit()
}
