package ledger

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// On PostgreSQL, VerifyChain compares the ledger's schema (its tables with their columns and
// constraints, its indexes, triggers and functions) with what this build's migrations make: they
// are applied into a schema of their own inside a transaction that is then rolled back, and both
// are read from the catalog. There is no quick_check: the server checks its own pages (with data
// checksums when the cluster has them) and its WAL, and VerifyChain reads every row of the
// ledger's tables, so a page the server cannot read fails the verification.

// pgSchemaSQL reads the objects of the schema named $1 as schemaObjects; each definition is
// without the schema's name, so that the reference and the ledger compare. Beyond the objects'
// definitions it reads what ALTER can change without redefining them, each of which lets
// someone with the database role hide or lose rows: a trigger disabled (or set to fire only
// under replication), a table made UNLOGGED (emptied by a crash) or given row level security,
// and the policies and rules on the ledger's tables (a rule can rewrite or drop a write).
const pgSchemaSQL = `WITH ns AS (SELECT oid, quote_ident(nspname) || '.' AS prefix FROM pg_namespace WHERE nspname = $1)
SELECT 'table', c.relname, replace((SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
		|| COALESCE(' COLLATE ' || (SELECT CAST(collname AS text) FROM pg_collation WHERE oid = a.attcollation AND a.attcollation <> 0), '')
		|| CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END
		|| CASE WHEN a.attidentity <> '' THEN ' IDENTITY ' || CAST(a.attidentity AS text) ELSE '' END
		|| CASE WHEN a.attgenerated <> '' THEN ' GENERATED' ELSE '' END
		|| COALESCE(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), ''), ', ' ORDER BY a.attnum)
	FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
	WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped)
	|| COALESCE((SELECT '; ' || string_agg(con.conname || ' ' || pg_get_constraintdef(con.oid), '; ' ORDER BY con.conname)
		FROM pg_constraint con WHERE con.conrelid = c.oid), '')
	|| '; kind ' || CAST(c.relkind AS text) || CASE c.relpersistence WHEN 'u' THEN '; UNLOGGED' ELSE '' END
	|| CASE WHEN c.relrowsecurity THEN '; ROW LEVEL SECURITY' ELSE '' END
	|| CASE WHEN c.relforcerowsecurity THEN '; FORCE ROW LEVEL SECURITY' ELSE '' END, ns.prefix, '')
FROM pg_class c JOIN ns ON c.relnamespace = ns.oid WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
UNION ALL SELECT 'index', c.relname, replace(pg_get_indexdef(c.oid), ns.prefix, '')
FROM pg_class c JOIN ns ON c.relnamespace = ns.oid WHERE c.relkind = 'i'
UNION ALL SELECT 'trigger', t.tgname, replace(pg_get_triggerdef(t.oid), ns.prefix, '')
	|| CASE t.tgenabled WHEN 'O' THEN '' WHEN 'D' THEN ' (DISABLED)' WHEN 'R' THEN ' (ENABLE REPLICA)' ELSE ' (ENABLE ALWAYS)' END
FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN ns ON c.relnamespace = ns.oid WHERE NOT t.tgisinternal
UNION ALL SELECT 'function', p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')',
	replace(pg_get_functiondef(p.oid), ns.prefix, '')
FROM pg_proc p JOIN ns ON p.pronamespace = ns.oid
UNION ALL SELECT 'policy', c.relname || '.' || p.polname, replace(CAST(p.polcmd AS text) || ' ' || CAST(p.polpermissive AS text)
		|| COALESCE(' USING ' || pg_get_expr(p.polqual, p.polrelid), '') || COALESCE(' CHECK ' || pg_get_expr(p.polwithcheck, p.polrelid), ''), ns.prefix, '')
FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid JOIN ns ON c.relnamespace = ns.oid
UNION ALL SELECT 'rule', c.relname || '.' || r.rulename, replace(pg_get_ruledef(r.oid), ns.prefix, '')
FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class JOIN ns ON c.relnamespace = ns.oid WHERE r.rulename <> '_RETURN'`

// verifyPostgresSchema compares the ledger's schema with what this build's migrations make. The
// tables of the migrations after the first, which bring no schema version (a process registry,
// rate limits), are no money and outside the trail: they are compared, never held to coverage.
func (db *DB) verifyPostgresSchema(ctx context.Context, conn *sql.Conn, rep *ChainReport) error {
	want, outside, err := db.postgresReference(ctx)
	if err != nil {
		return err
	}
	var schema string
	if err := conn.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return err
	}
	have, err := readPostgresSchema(ctx, conn, schema)
	if err != nil {
		return err
	}
	compareSchema(want, have, outside, rep)
	return nil
}

func readPostgresSchema(ctx context.Context, q txQuerier, schema string) (map[string]schemaObject, error) {
	objs, err := scanAll(ctx, q, pgSchemaSQL, func(s scanner) (schemaObject, error) {
		var o schemaObject
		return o, s.Scan(&o.kind, &o.name, &o.sql)
	}, schema)
	out := make(map[string]schemaObject, len(objs))
	for _, o := range objs {
		out[o.name] = o
	}
	return out, err
}

// postgresReference is the schema this build's migrations make, applied into a schema of its own
// in a transaction that is rolled back, and the tables outside the trail (made by migrations
// that bring no schema version). A role that may not create a schema in the database (an
// auditor's, which reads the ledger and writes nothing) applies them into its session's
// temporary schema instead (tempReference).
func (db *DB) postgresReference(ctx context.Context) (map[string]schemaObject, map[string]bool, error) {
	files, err := postgresMigrations()
	if err != nil {
		return nil, nil, err
	}
	want, outside, err := db.reference(ctx, files, false)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42501" { // insufficient_privilege
		want, outside, err = db.reference(ctx, files, true)
	}
	return want, outside, err
}

// reference applies files into a new schema, or into the session's temporary one, and reads it.
func (db *DB) reference(ctx context.Context, files []pgMigration, temp bool) (map[string]schemaObject, map[string]bool, error) {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return nil, nil, err
	}
	defer tx.Rollback() // the reference is read, never kept
	b := make([]byte, 8)
	rand.Read(b)
	schema := "ledger_reference_" + hex.EncodeToString(b)
	stmts := []string{`CREATE SCHEMA ` + schema, `SET LOCAL search_path TO ` + schema, ledgerMigrationsTable}
	if temp {
		stmts = []string{`SET LOCAL search_path TO pg_temp`, ledgerMigrationsTable}
	}
	for _, stmt := range stmts {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return nil, nil, fmt.Errorf("the migrations' schema: %w", err)
		}
	}
	if temp {
		if err := tx.QueryRowContext(ctx, `SELECT nspname FROM pg_namespace WHERE oid = pg_my_temp_schema()`).Scan(&schema); err != nil {
			return nil, nil, fmt.Errorf("the migrations' schema: %w", err)
		}
	}
	var ledgerTables map[string]schemaObject
	for _, f := range files {
		body := f.body
		if temp {
			body = inTempSchema(body)
		}
		if _, err := tx.ExecContext(ctx, body); err != nil {
			return nil, nil, fmt.Errorf("the migrations' schema: %s: %w", f.name, err)
		}
		// The ledger's tables are the first versioned migration's: a table a later one adds
		// (the console's sessions) is outside the trail, like those of the unversioned ones.
		if ledgerTables == nil && f.schema != 0 {
			if ledgerTables, err = readPostgresSchema(ctx, tx, schema); err != nil {
				return nil, nil, err
			}
		}
	}
	want, err := readPostgresSchema(ctx, tx, schema)
	if err != nil {
		return nil, nil, err
	}
	if temp { // the server names its temporary schema pg_temp in definitions
		for name, o := range want {
			o.sql = strings.ReplaceAll(o.sql, "pg_temp.", "")
			want[name] = o
		}
	}
	outside := map[string]bool{"ledger_migrations": true}
	for name, o := range want {
		if _, ok := ledgerTables[name]; !ok && o.kind == "table" {
			outside[name] = true
		}
	}
	return want, outside, nil
}

// inTempSchema is a migration that makes its functions in the session's temporary schema: the
// server never looks a function up there by its bare name (so that a temporary object cannot
// stand in for another), and the triggers name them as pg_temp's. The server writes that schema
// as pg_temp in the definitions it gives, which reference drops, so that the reference reads as
// one made in a schema of its own.
func inTempSchema(body string) string {
	return strings.NewReplacer("CREATE FUNCTION ", "CREATE FUNCTION pg_temp.", "EXECUTE FUNCTION ", "EXECUTE FUNCTION pg_temp.").Replace(body)
}

// snapshotReader is a second connection in conn's snapshot, reading what conn, in its read
// transaction, reads: VerifyChain reads two tables side by side, which a PostgreSQL connection
// cannot (one query at a time).
func (db *DB) snapshotReader(ctx context.Context, conn *sql.Conn) (*sql.Conn, error) {
	var snapshot string
	if err := conn.QueryRowContext(ctx, `SELECT pg_export_snapshot()`).Scan(&snapshot); err != nil {
		return nil, err
	}
	other, err := db.sql.Conn(ctx)
	if err != nil {
		return nil, err
	}
	for _, stmt := range []string{db.eng.beginRead, `SET TRANSACTION SNAPSHOT '` + strings.ReplaceAll(snapshot, "'", "") + `'`} {
		if _, err := other.ExecContext(ctx, stmt); err != nil {
			other.ExecContext(context.Background(), "ROLLBACK")
			other.Close()
			return nil, err
		}
	}
	return other, nil
}
