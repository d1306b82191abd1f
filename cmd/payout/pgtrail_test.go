package main_test

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/payout/payout/internal/pgtest"
	"github.com/payout/payout/ledger"
)

// pgNotEdited are the tables of a PostgreSQL ledger that are no money and outside the trail:
// audit verify compares their definitions with the migrations', never their rows.
var pgNotEdited = map[string]string{
	"ledger_migrations": "the migrations applied: a row edited changes nothing Open or a command reads but the version it checks",
	"processes":         "who holds the ledger now: a row names a process, its advisory lock (held by a session) says whether it runs",
	"rate_limits":       "the shared pace of requests: an edit can slow or hasten sending, never pay or unpay anything",
	"console_sessions":  "the console's sessions, by a digest of their tokens: a row signs in only a person the allowed signers list",
}

// pgTrailLedger is trailLedger on a PostgreSQL ledger named by PAYOUT_LEDGER, with a reconcile
// after the runs. It returns the user, the ledger's database name and the admin URL of its
// cluster, so that a test can copy the ledger (CREATE DATABASE ... TEMPLATE) before each edit.
func pgTrailLedger(t *testing.T) (u *user, dbName, admin string) {
	t.Helper()
	u = newUserWithoutLedger(t, newSandbox(t))
	where := pgtest.New(t)
	u.env = append(u.env, "PAYOUT_LEDGER="+where)
	if out, errOut, code := u.run("init"); code != 0 {
		t.Fatalf("init: exit %d: %s %s", code, out, errOut)
	}
	fillTrail(t, u, where)
	if out, errOut, code := u.run("reconcile"); code != 0 {
		t.Fatalf("reconcile: exit %d: %s %s", code, out, errOut)
	}
	if out, errOut, code := u.run("audit", "verify"); code != 0 {
		t.Fatalf("audit verify after reconcile: exit %d: %s %s", code, out, errOut)
	}
	p, err := url.Parse(where)
	if err != nil {
		t.Fatal(err)
	}
	return u, strings.TrimPrefix(p.Path, "/"), pgtest.Admin(t)
}

var copies atomic.Int64

// on is u in t with PAYOUT_LEDGER set to where.
func (u *user) on(t *testing.T, where string) *user {
	v := *u
	v.tb, v.env = t, append(slices.Clone(u.env), "PAYOUT_LEDGER="+where) // the last one is used
	return &v
}

// pgCopy is a copy of the database named name, dropped when t ends, and its URL.
func pgCopy(t *testing.T, admin, name string) string {
	t.Helper()
	db := pgOpen(t, admin)
	defer db.Close()
	cp := fmt.Sprintf("%s_c%d", name, copies.Add(1))
	pgMust(t, db, `CREATE DATABASE `+cp+` TEMPLATE `+name)
	t.Cleanup(func() {
		db := pgOpen(t, admin)
		defer db.Close()
		pgMust(t, db, `DROP DATABASE IF EXISTS `+cp+` WITH (FORCE)`)
	})
	return strings.Replace(admin, "/postgres?", "/"+cp+"?", 1)
}

func pgOpen(t *testing.T, u string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1) // one session: its SET lasts for every statement
	return db
}

func pgMust(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// pgColumn is a column of a ledger table as information_schema tells it.
type pgColumn struct {
	table, name, dataType string
	identity, generated   bool
}

// pgSchemaOf reads every table of the ledger's schema, its columns and its primary key from
// information_schema: a table or a column added later is edited too.
func pgSchemaOf(t *testing.T, db *sql.DB) (tables []string, cols map[string][]pgColumn, pks map[string][]string) {
	t.Helper()
	cols, pks = map[string][]pgColumn{}, map[string][]string{}
	rows, err := db.Query(`SELECT table_name, column_name, data_type, is_identity = 'YES', is_generated <> 'NEVER'
		FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c pgColumn
		if err := rows.Scan(&c.table, &c.name, &c.dataType, &c.identity, &c.generated); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(tables, c.table) {
			tables = append(tables, c.table)
		}
		cols[c.table] = append(cols[c.table], c)
	}
	rows.Close()
	rows, err = db.Query(`SELECT k.table_name, k.column_name FROM information_schema.table_constraints c
		JOIN information_schema.key_column_usage k USING (constraint_schema, constraint_name)
		WHERE c.constraint_type = 'PRIMARY KEY' AND c.table_schema = current_schema() ORDER BY k.table_name, k.ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var tb, c string
		if err := rows.Scan(&tb, &c); err != nil {
			t.Fatal(err)
		}
		pks[tb] = append(pks[tb], c)
	}
	return tables, cols, pks
}

// pgPickRow is pickRow on PostgreSQL: the key of a row whose column holds something.
func pgPickRow(t *testing.T, db *sql.DB, c pgColumn, pk []string) []any {
	t.Helper()
	quoted := make([]string, len(pk))
	for i, k := range pk {
		quoted[i] = `CAST("` + k + `" AS text)`
	}
	empty := fmt.Sprintf(`("%[1]s" IS NULL OR CAST("%[1]s" AS text) IN ('', '0'))`, c.name)
	key := make([]any, len(pk))
	ptrs := make([]any, len(pk))
	for i := range key {
		ptrs[i] = &key[i]
	}
	q := fmt.Sprintf(`SELECT %s FROM "%s" ORDER BY %s, %s LIMIT 1`, strings.Join(quoted, ", "), c.table, empty, strings.Join(quoted, ", "))
	if err := db.QueryRow(q).Scan(ptrs...); err != nil {
		t.Fatalf("%s: no row to edit (%v): the ledger filled for this test must have one", c.table, err)
	}
	return key
}

// pgApply edits column c of the row keyed by key, as a superuser with psql would: its session's
// triggers off (session_replication_role: the guards, the state totals' and the foreign keys'); an integer moved by a large step, a text changed at its end, or (where a CHECK
// allows only some words) another allowed word.
func pgApply(t *testing.T, db *sql.DB, c pgColumn, pk []string, key []any) {
	t.Helper()
	where := make([]string, len(pk))
	for i, k := range pk {
		where[i] = fmt.Sprintf(`CAST("%s" AS text) = $%d`, k, i+1)
	}
	set := fmt.Sprintf(`"%s" || '9'`, c.name)
	if strings.Contains(c.dataType, "int") {
		set = fmt.Sprintf(`"%s" + 1000003`, c.name)
	}
	update := func(set string) (int64, error) {
		res, err := db.Exec(fmt.Sprintf(`UPDATE "%s" SET "%s" = %s WHERE %s`, c.table, c.name, set, strings.Join(where, " AND ")), key...)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	}
	pgMust(t, db, `SET session_replication_role = replica`)
	n, err := update(set)
	if err != nil && strings.Contains(err.Error(), "check constraint") {
		n, err = update(fmt.Sprintf(`CASE "%[1]s" WHEN 'rejected' THEN 'approved' ELSE 'rejected' END`, c.name))
	}
	if err != nil || n != 1 {
		t.Fatalf("edit %s.%s: %d rows, %v", c.table, c.name, n, err)
	}
}

// Every column of every table of a real PostgreSQL ledger (a paid run with a rejected and a
// refused row, its retry, callbacks, a policy and a signed run, a reconcile), edited by hand one
// at a time through SQL, is named by `payout audit verify` (exit 4) by table, column and key, as
// on SQLite. The tables and columns are read from information_schema. Each edit is a copy of the
// ledger and a run of the binary (half a second): the tests edit every table's first column and
// every fourth after it, and `make trail-postgres` (PAYOUT_PG_TRAIL_ALL=1) every column. That both
// engines' tables have the same columns is TestBothEnginesHaveTheSameColumns's, in ledger.
func TestAuditVerifyNamesAHandEditOfEveryColumnOnPostgres(t *testing.T) {
	t.Parallel() // long, and mostly waiting on processes: beside the other long ones
	every := 4
	if os.Getenv("PAYOUT_PG_TRAIL_ALL") != "" {
		every = 1
	}
	u, name, admin := pgTrailLedger(t)
	db := pgOpen(t, strings.Replace(admin, "/postgres?", "/"+name+"?", 1))
	tables, cols, pks := pgSchemaOf(t, db)
	db.Close()
	coverage := ledger.Coverage()
	edits := 0
	for _, table := range tables {
		if why, ok := pgNotEdited[table]; ok {
			t.Logf("%s: not edited (%s)", table, why)
			continue
		}
		if _, ok := coverage[table]; !ok {
			t.Errorf("table %s is not covered by the trail (ledger.Coverage)", table)
			continue
		}
		if slices.Contains(closedTables, table) {
			continue // empty, a trigger refuses rows: the schema's comparison names a trigger dropped
		}
		for i, c := range cols[table] {
			if i%every != 0 {
				continue
			}
			if c.generated || c.identity {
				// Computed from another column (amount_sen), or the order rows were added in
				// (runs.insertion_order, SQLite's rowid): never written, and an UPDATE is refused.
				continue
			}
			t.Run(table+"."+c.name, func(t *testing.T) {
				cp := pgCopy(t, admin, name)
				edit := pgOpen(t, cp)
				defer edit.Close()
				key := pgPickRow(t, edit, c, pks[table])
				pgApply(t, edit, c, pks[table], key)
				edit.Close()
				e := handEdit{table: table, column: c.name, pk: pks[table], key: key}
				out, errOut, code := u.on(t, cp).run("audit", "verify")
				if code != 4 || !e.named(out) {
					t.Errorf("%s.%s of row %v edited by hand: exit %d, want 4 with a finding naming it:\n%s%s", table, c.name, key, code, out, errOut)
				}
			})
			edits++
		}
	}
	if edits < 80/every {
		t.Errorf("only %d columns edited: the schema was not read", edits)
	}
}
