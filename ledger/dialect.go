package ledger

import (
	"encoding/json"
	"strconv"
)

// The ledger's SQL is written once, in the forms SQLite and PostgreSQL both accept: standard
// joins and subqueries, CASE, COALESCE, `INSERT ... ON CONFLICT (...) DO NOTHING | DO UPDATE`
// and `RETURNING` (both engines' upserts), text timestamps in one fixed-width format that sorts,
// and `$1`-style numbered parameters where a statement is built from parts (SQLite binds them as
// PostgreSQL does; the older statements' `?` are positional, which a second engine rebinds in
// order). The few fragments where the engines differ are named here, with the other engine's
// form beside each; nothing else in the package spells an engine's own syntax. What only a file
// has (its opening checks, pragmas, lock, quick_check, WAL and VACUUM) is in the sqlite_*.go
// files, and the schema (migrations/, with its `WITHOUT ROWID` tables, `GLOB` checks and
// triggers) is SQLite's own: another engine brings its own migrations to the same tables.

// beginWrite starts a write transaction that holds the write lock from its first statement, so
// that the chain's head it reads is still the head when it appends. PostgreSQL: BEGIN, then a
// transaction advisory lock taken before the head is read.
const beginWrite = "BEGIN IMMEDIATE"

// insertionOrder is a table's hidden column that counts rows as they were inserted: the
// tie-break between two runs that started in the same instant. PostgreSQL: an identity column.
const insertionOrder = "rowid"

// inJSONList is the right-hand side of an IN that takes its values from one parameter, a JSON
// array: one statement of one shape for any number of values, so a chunk of thousands is one
// short statement to prepare rather than one with thousands of parameters. PostgreSQL:
// (SELECT jsonb_array_elements_text(?::jsonb)), or = ANY(?) over an array parameter.
const inJSONList = `(SELECT value FROM json_each($1))`

// inJSONListAt is inJSONList over a numbered parameter ("$2"), for statements built from parts.
func inJSONListAt(param string) string { return `(SELECT value FROM json_each(` + param + `))` }

// payoutsOfJSONList is a FROM clause that joins each value of one parameter, a JSON array of
// references, to its payout, "p": one probe of the payouts' key a value, where an IN list would
// first copy the values into a temporary index (a third of what looking a chunk up costs).
// PostgreSQL: jsonb_array_elements_text(?::jsonb) AS list(value) JOIN payouts AS p ON ...
const payoutsOfJSONList = `json_each($1) AS list JOIN payouts AS p ON p.ref = list.value`

// jsonEach is a FROM source over the elements of a JSON array parameter, each already parsed
// (value ->> 0 reads an element's first field without parsing it again). PostgreSQL:
// jsonb_array_elements(param::jsonb) AS j(value).
func jsonEach(param string) string { return `jsonb_each(` + param + `)` }

// indexedBy pins a query to the index SQLite's planner would otherwise pass over for a table
// scan at some sizes (the queries' plans are tested). PostgreSQL: nothing; its planner reads
// the statistics that ANALYZE keeps.
func indexedBy(index string) string { return ` INDEXED BY ` + index }

// greatest is the larger of two values: SQLite's two-argument max. PostgreSQL: GREATEST(a, b).
func greatest(a, b string) string { return `max(` + a + `, ` + b + `)` }

// quoted is a column's value as an SQL literal ('text', 12, NULL): the form in which a row event
// holds each column, and so part of the chain's hashes. PostgreSQL's quote_nullable writes
// numbers and text alike; an engine that cannot write SQLite's literal text renders it in Go
// from the scanned values; VerifyChain, which recomputes every hash, holds it to the same text.
func quoted(column string) string { return `quote("` + column + `")` }

// zeroPadded is an integer column as text of width digits, zeros first, so that keys sort as
// their numbers do (row events' keys, in the chain). PostgreSQL: lpad(column::text, width, '0').
func zeroPadded(column string, width int) string {
	return "printf('%0" + strconv.Itoa(width) + "d', " + column + ")"
}

// tableColumnsSQL lists a table's columns, in table order, given its name. PostgreSQL: SELECT
// column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position.
const tableColumnsSQL = `SELECT name FROM pragma_table_info($1) ORDER BY cid`

// jsonList is the JSON array of values, the parameter of inJSONList and payoutsOfJSONList.
func jsonList(values any) string {
	b, err := json.Marshal(values)
	if err != nil {
		// Strings and numbers always marshal.
		panic(err)
	}
	return string(b)
}
