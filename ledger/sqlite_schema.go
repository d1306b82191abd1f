package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
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

// referenceSchema is the schema this build's migrations make, in a database in memory.
func referenceSchema(ctx context.Context) (map[string]schemaObject, error) {
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
