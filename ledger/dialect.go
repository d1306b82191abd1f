package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"strconv"
	"time"
)

// The ledger's SQL is written once, in the forms SQLite and PostgreSQL both accept: standard
// joins and subqueries, CASE, COALESCE, `INSERT ... ON CONFLICT (...) DO NOTHING | DO UPDATE`
// and `RETURNING` (both engines' upserts), text timestamps in one fixed-width format that sorts,
// integers 0 and 1 for yes and no, and `$1`-style numbered parameters (SQLite binds them by
// number, as PostgreSQL does; only the multi-row inserts write the engine's param). The few fragments where the engines differ are an engine's, each
// with both forms here; nothing else in the package spells an engine's own syntax. What only a
// file has (its opening checks, pragmas, lock, quick_check, WAL and VACUUM) is in the sqlite_*.go
// files, what only a server has in the postgres_*.go files, and each engine brings its own
// migrations to the same tables (migrations/ for SQLite, migrations/postgres/ for PostgreSQL).
type engine struct {
	name string // "SQLite" or "PostgreSQL", for messages
	// checkStorage adds to a verification what the engine finds of its own storage (SQLite's
	// quick_check); nil where the server keeps that to itself.
	checkStorage func(ctx context.Context, conn *sql.Conn, rep *ChainReport) error
	// verifySchema adds to a verification where the schema differs from the one the ledger made.
	verifySchema func(db *DB, ctx context.Context, conn *sql.Conn, rep *ChainReport) error
	// forgetFreed makes what a purge freed unreadable in the engine's files (sqlite_forget.go).
	forgetFreed func(db *DB, ctx context.Context, wait time.Duration) error
	// secondReader is a second connection reading what conn reads in its read transaction, for
	// VerifyChain's two tables side by side; nil where conn itself can (SQLite).
	secondReader func(db *DB, ctx context.Context, conn *sql.Conn) (*sql.Conn, error)
	// beginWrite starts a write transaction on the writer's connection; with lockChain after it
	// (holdChain), the transaction holds the chain, so that the chain's head it reads is still
	// the head when it appends.
	beginWrite []string
	// lockChain is run first in a transaction that BeginTx started, before it reads the head:
	// "" where BeginTx already takes the write lock (SQLite's _txlock=immediate).
	lockChain string
	// boundWrites gives each write transaction of the writer writeDeadline: a server may stop
	// answering, a file does not (SQLite waits for its lock by busy_timeout), and SQLite's driver
	// watches a statement's cancellable context with a goroutine of its own, one per statement.
	boundWrites bool
	// insertionOrder is a runs column that counts rows as they were inserted: the tie-break
	// between two runs that started in the same instant.
	insertionOrder string
	// jsonTable is a FROM source, named alias, over the values of a JSON array parameter, in one
	// column "value": an IN over one parameter, of one shape for any number of values, so that a
	// chunk of thousands is one short statement to prepare rather than one with thousands of
	// parameters.
	jsonTable func(param, alias string) string
	// jsonInteger is a value of jsonTable that is an integer, as an integer: SQLite's json_each
	// gives numbers their type already.
	jsonInteger func(value string) string
	// jsonElements is a FROM source over the elements of a JSON array parameter, each already
	// parsed as "value" (value ->> 0 reads an element's first field without parsing it again).
	jsonElements func(param string) string
	// jsonField is a text column holding a JSON object's member as text.
	jsonField func(column, member string) string
	// indexedBy pins a query to an index SQLite's planner would otherwise pass over for a table
	// scan at some sizes (the queries' plans are tested); PostgreSQL reads its statistics.
	indexedBy func(index string) string
	// joinInOrder joins the table after it with an ON condition, in the order written: SQLite's
	// planner keeps a CROSS JOIN's order (so a big ledger is never scanned for it).
	joinInOrder string
	// greatest is the larger of two values.
	greatest func(a, b string) string
	// quoted is a column's value as SQLite's quote() writes it ('text' with '' doubled, 12,
	// NULL): the form in which a row event holds each column, and so part of the chain's hashes.
	// PostgreSQL's schema has ledger_quote, which writes the same text for the ledger's types.
	quoted func(column string) string
	// zeroPadded is an integer column as text of width digits, zeros first, so that keys sort as
	// their numbers do (row events' keys, in the chain).
	zeroPadded func(column string, width int) string
	// tableColumnsSQL lists a table's columns, in table order, given its name as $1: not the
	// generated ones (computed from the others) nor PostgreSQL's insertion order.
	tableColumnsSQL string
	// schemaVersionSQL reads the schema version: the number of SQLite's last migration that the
	// ledger's tables are.
	schemaVersionSQL string
	// beginRead starts a read-only transaction that sees one snapshot (DB.snapshot).
	beginRead string
	// param is the nth parameter of a statement the package writes with its parameters in order
	// (the multi-row inserts): SQLite's "?", which its driver binds by position, where for a
	// "$n" it asks SQLite the parameter's name, a walk of all the statement's names, so that
	// binding an insert of 64 rows by 14 costs time in the square of its 896 parameters.
	param func(n int) string
}

// sqliteEngine is the engine of a ledger in a SQLite file.
var sqliteEngine = &engine{
	name:           "SQLite",
	beginWrite:     []string{"BEGIN IMMEDIATE"},
	insertionOrder: "rowid",
	jsonTable:      func(p, alias string) string { return `json_each(` + p + `) AS ` + alias },
	jsonInteger:    func(v string) string { return v },
	jsonElements:   func(p string) string { return `jsonb_each(` + p + `)` },
	jsonField:      func(c, m string) string { return `json_extract(` + c + `, '$.` + m + `')` },
	indexedBy:      func(index string) string { return ` INDEXED BY ` + index },
	joinInOrder:    ` CROSS JOIN `,
	greatest:       func(a, b string) string { return `max(` + a + `, ` + b + `)` },
	quoted:         func(c string) string { return `quote("` + c + `")` },
	zeroPadded: func(c string, width int) string {
		return "printf('%0" + strconv.Itoa(width) + "d', " + c + ")"
	},
	tableColumnsSQL:  `SELECT name FROM pragma_table_info($1) ORDER BY cid`,
	schemaVersionSQL: `PRAGMA user_version`,
	beginRead:        `BEGIN DEFERRED`,
	param:            func(int) string { return "?" },
}

// chainLockKey is the PostgreSQL transaction advisory lock every write transaction takes before
// it reads the chain's head, so that writers on several hosts extend one chain (0x7061796f7574
// is "payout" in ASCII). The migrations take schemaLockKey, so that two `payout init` at once
// cannot both make the schema.
const (
	chainLockKey  = 0x7061796f7574
	schemaLockKey = chainLockKey + 1
)

// The verifications refer to the engines themselves (the reference schema is made with one), so
// they are set once the engines are.
func init() {
	sqliteEngine.checkStorage = quickCheckFindings
	sqliteEngine.verifySchema = func(_ *DB, ctx context.Context, conn *sql.Conn, rep *ChainReport) error {
		return verifySchema(ctx, conn, rep)
	}
	sqliteEngine.forgetFreed = (*DB).forgetFreedSQLite
	postgresEngine.verifySchema = (*DB).verifyPostgresSchema
	postgresEngine.secondReader = (*DB).snapshotReader
	postgresEngine.forgetFreed = func(db *DB, ctx context.Context, _ time.Duration) error { return db.vacuumPurged(ctx) }
}

// postgresEngine is the engine of a ledger in a PostgreSQL database.
var postgresEngine = &engine{
	name:           "PostgreSQL",
	beginWrite:     []string{"BEGIN"}, // then lockChain, by holdChain
	lockChain:      "SELECT pg_advisory_xact_lock(" + strconv.Itoa(chainLockKey) + ")",
	boundWrites:    true,
	insertionOrder: "insertion_order",
	jsonTable: func(p, alias string) string {
		return `jsonb_array_elements_text(CAST(` + p + ` AS jsonb)) AS ` + alias + `(value)`
	},
	jsonInteger:  func(v string) string { return `CAST(` + v + ` AS bigint)` },
	jsonElements: func(p string) string { return `jsonb_array_elements(CAST(` + p + ` AS jsonb)) AS j(value)` },
	jsonField:    func(c, m string) string { return `(CAST(` + c + ` AS jsonb) ->> '` + m + `')` },
	indexedBy:    func(string) string { return `` },
	joinInOrder:  ` JOIN `,
	greatest:     func(a, b string) string { return `GREATEST(` + a + `, ` + b + `)` },
	quoted:       func(c string) string { return `ledger_quote("` + c + `")` },
	zeroPadded: func(c string, width int) string {
		return "lpad(CAST(" + c + " AS text), " + strconv.Itoa(width) + ", '0')"
	},
	tableColumnsSQL: `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema()
		AND table_name = $1 AND is_generated = 'NEVER' AND column_name <> 'insertion_order' ORDER BY ordinal_position`,
	schemaVersionSQL: `SELECT COALESCE(max(schema_version), 0) FROM ledger_migrations`,
	beginRead:        `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`,
	param:            func(n int) string { return "$" + strconv.Itoa(n) },
}

// inJSONList is the right-hand side of an IN whose values are the JSON array $1.
func (e *engine) inJSONList() string { return e.inJSONListAt("$1") }

// inJSONListAt is inJSONList over another parameter ("$2").
func (e *engine) inJSONListAt(param string) string {
	return `(SELECT value FROM ` + e.jsonTable(param, "list") + `)`
}

// inJSONIntegersAt is inJSONListAt over a JSON array of integers.
func (e *engine) inJSONIntegersAt(param string) string {
	return `(SELECT ` + e.jsonInteger("value") + ` FROM ` + e.jsonTable(param, "list") + `)`
}

// payoutsOfJSONList is a FROM clause that joins each value of $1, a JSON array of references,
// to its payout, "p": one probe of the payouts' key a value, where an IN list would first copy
// the values into a temporary index (a third of what looking a chunk up costs).
func (e *engine) payoutsOfJSONList() string {
	return e.jsonTable("$1", "list") + ` JOIN payouts AS p ON p.ref = list.value`
}

// jsonList is the JSON array of values, the parameter of inJSONList and payoutsOfJSONList.
func jsonList(values any) string {
	b, err := json.Marshal(values)
	if err != nil {
		// Strings and numbers always marshal.
		panic(err)
	}
	return string(b)
}

// yes is a flag as the ledger's integer columns hold it.
func yes(b bool) int {
	if b {
		return 1
	}
	return 0
}
