package ledger

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// queryRecorder is a preparer that keeps the statements it was given.
type queryRecorder struct {
	preparer
	queries []string
}

func (q *queryRecorder) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	q.queries = append(q.queries, query)
	return q.preparer.PrepareContext(ctx, query)
}

// On SQLite the multi-row inserts are written with "?" only: the driver binds a "$n" by asking
// SQLite its name, a walk of all the statement's names, which made binding an insert of 64 rows
// of 14 cost more than running it. The rows still land in order, column by column.
func TestMultiRowInsertOnSQLiteBindsByPosition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	raw, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "insert.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.ExecContext(ctx, `CREATE TABLE t (a INTEGER, b TEXT, c TEXT)`); err != nil {
		t.Fatal(err)
	}
	rec := &queryRecorder{preparer: raw}
	ins := &multiRowInsert{eng: sqliteEngine, prep: rec, width: 3, head: `INSERT INTO t (a, b, c) VALUES `}
	var args []any
	var want []string
	for i := range insertChunk + 3 { // a full chunk, then 2 rows and 1
		args = append(args, i, "b"+strings.Repeat("x", i%3), "c")
		want = append(want, strings.Join([]string{strconv.Itoa(i), "b" + strings.Repeat("x", i%3), "c"}, "|"))
	}
	if err := ins.exec(ctx, args); err != nil {
		t.Fatal(err)
	}
	if err := ins.close(); err != nil {
		t.Fatal(err)
	}
	if len(rec.queries) != 3 {
		t.Errorf("prepared %d statements for %d rows, want 3 (%d, 2, 1 rows)", len(rec.queries), insertChunk+3, insertChunk)
	}
	for _, q := range rec.queries {
		if strings.Contains(q, "$") {
			t.Errorf("a SQLite multi-row insert names its parameters: %.80s...", q)
		}
	}
	rows, err := raw.QueryContext(ctx, `SELECT a || '|' || b || '|' || c FROM t ORDER BY rowid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows stored:\n%q\nwant:\n%q", got, want)
	}

	// PostgreSQL's statements number their parameters, in order.
	pg := &multiRowInsert{eng: postgresEngine, width: 2, head: `INSERT INTO t (a, b) VALUES `}
	var text strings.Builder
	pg.prep = preparerFunc(func(q string) { text.WriteString(q) })
	if _, err := pg.stmt(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if got, want := text.String(), `INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4)`; got != want {
		t.Errorf("PostgreSQL's insert:\n%s\nwant:\n%s", got, want)
	}
}

// preparerFunc hands a statement to a function and prepares nothing.
type preparerFunc func(query string)

func (f preparerFunc) PrepareContext(_ context.Context, query string) (*sql.Stmt, error) {
	f(query)
	return nil, nil
}
