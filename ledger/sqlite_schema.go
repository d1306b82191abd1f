package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"
)

// schemaObject is one entry of sqlite_master.
type schemaObject struct{ kind, name, sql string }

// verifySchema compares the ledger's tables, indexes and triggers with what this build's
// migrations make: a trigger dropped or changed by hand (the events' append-only guard, the
// running totals) or a table added by hand is named.
func verifySchema(ctx context.Context, conn *sql.Conn, rep *ChainReport) error {
	want, err := referenceSchema(ctx)
	if err != nil {
		return err
	}
	have, err := readSchema(ctx, conn)
	if err != nil {
		return err
	}
	compareSchema(want, have, nil, rep)
	return nil
}

// compareSchema names what differs between the schema the migrations make (want) and the
// ledger's (have), and every table of the ledger's the trail does not cover, unless it is one
// of outside.
func compareSchema(want, have map[string]schemaObject, outside map[string]bool, rep *ChainReport) {
	for _, n := range keysOfBoth(want, have) {
		w, inWant := want[n]
		h, inHave := have[n]
		switch {
		case !inHave:
			rep.Findings = append(rep.Findings, Finding{Problem: fmt.Sprintf("schema: %s %s is missing (dropped by hand)", w.kind, w.name)})
		case !inWant:
			rep.Findings = append(rep.Findings, Finding{Problem: fmt.Sprintf("schema: %s %s is not made by the migrations (added by hand)", h.kind, h.name)})
		case w != h:
			rep.Findings = append(rep.Findings, Finding{Problem: fmt.Sprintf("schema: %s %s differs from what the migrations make (changed by hand)", h.kind, h.name)})
		}
	}
	for _, o := range have {
		if _, ok := coverage[o.name]; o.kind == "table" && !ok && !outside[o.name] {
			rep.Findings = append(rep.Findings, Finding{Problem: fmt.Sprintf("schema: table %s is not covered by the trail", o.name)})
		}
	}
}

func readSchema(ctx context.Context, q txQuerier) (map[string]schemaObject, error) {
	objs, err := scanAll(ctx, q, `SELECT type, name, COALESCE(sql, '') FROM sqlite_master WHERE name NOT LIKE 'sqlite_autoindex_%'`,
		func(s scanner) (schemaObject, error) {
			var o schemaObject
			return o, s.Scan(&o.kind, &o.name, &o.sql)
		})
	out := make(map[string]schemaObject, len(objs))
	for _, o := range objs {
		out[o.name] = o
	}
	return out, err
}

// reference holds the schema this build's migrations make, once made: every verification
// compares with it, and making it runs every migration (a tenth of a second, and most of what
// checking a small ledger costs). Only a schema made whole is kept.
var reference struct {
	sync.Mutex
	schema map[string]schemaObject // read only
}

// referenceSchema is the schema this build's migrations make, in a database in memory. The map
// is shared: callers only read it.
func referenceSchema(ctx context.Context) (map[string]schemaObject, error) {
	reference.Lock()
	defer reference.Unlock()
	if reference.schema != nil {
		return reference.schema, nil
	}
	schema, err := makeReferenceSchema(ctx)
	if err == nil {
		reference.schema = schema
	}
	return schema, err
}

// makeReferenceSchema runs this build's migrations in a database in memory, and reads its schema.
func makeReferenceSchema(ctx context.Context) (map[string]schemaObject, error) {
	mem, err := sql.Open("sqlite", "file:reference?mode=memory")
	if err != nil {
		return nil, err
	}
	defer mem.Close()
	mem.SetMaxOpenConns(1) // one connection: each would have its own database in memory
	ref := &DB{sql: mem, eng: sqliteEngine, now: time.Now, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := ref.migrate(ctx); err != nil {
		return nil, err
	}
	return readSchema(ctx, mem)
}
