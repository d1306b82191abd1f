package ledger_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/internal/pgtest"
	"github.com/payout/payout/ledger"
)

// mustCreatePG makes a ledger in a new PostgreSQL database, on the tests' clock.
func mustCreatePG(tb testing.TB) (*ledger.DB, string) {
	tb.Helper()
	url := pgtest.New(tb)
	db, err := ledger.Create(context.Background(), url, ledger.Options{Now: ticking(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db, url
}

// pgEdit closes db and runs statements on its database as someone with psql would, then opens
// the ledger again.
func pgEdit(t *testing.T, db *ledger.DB, url string, stmts ...string) *ledger.DB {
	t.Helper()
	must(t, db.Close())
	pgExec(t, url, stmts...)
	again, err := ledger.Open(context.Background(), url, ledger.Options{Logger: slog.New(slog.DiscardHandler)})
	must(t, err)
	t.Cleanup(func() { again.Close() })
	return again
}

// pgExec runs statements on the database at url through a connection of its own.
func pgExec(t *testing.T, url string, stmts ...string) {
	t.Helper()
	raw, err := sql.Open("pgx", url)
	must(t, err)
	defer raw.Close()
	for _, s := range stmts {
		if _, err := raw.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// Open refuses a database without a ledger, a database of something else, and a ledger newer
// than it knows; Create refuses a database that already holds a ledger. Each names the URL
// without its password.
func TestPostgresOpenRefusesWhatIsNoLedger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	empty := pgtest.New(t)
	_, err := ledger.Open(ctx, empty, ledger.Options{})
	if !errors.Is(err, ledger.ErrNoLedger) || !strings.Contains(err.Error(), "run `payout init` with that URL") {
		t.Errorf("Open of an empty database: %v, want ErrNoLedger saying to run payout init", err)
	}
	foreign := pgtest.New(t)
	pgExec(t, foreign, `CREATE TABLE invoices (id int)`)
	if _, err = ledger.Open(ctx, foreign, ledger.Options{}); !errors.Is(err, ledger.ErrNotLedger) {
		t.Errorf("Open of another application's database: %v, want ErrNotLedger", err)
	}
	if _, err = ledger.Create(ctx, foreign, ledger.Options{}); !errors.Is(err, ledger.ErrExists) || !strings.Contains(err.Error(), "invoices") {
		t.Errorf("Create in another application's database: %v, want ErrExists naming its tables", err)
	}
	db, url := mustCreatePG(t)
	if _, err = ledger.Create(ctx, url, ledger.Options{}); !errors.Is(err, ledger.ErrExists) {
		t.Errorf("Create over a ledger: %v, want ErrExists", err)
	}
	must(t, db.Close())
	pgExec(t, url, `INSERT INTO ledger_migrations VALUES (9999, 'from a newer build', 99, '')`)
	withPassword := strings.Replace(url, "postgres://postgres@", "postgres://postgres:s3cr3t-pw@", 1)
	_, err = ledger.Open(ctx, withPassword, ledger.Options{})
	if err == nil || !strings.Contains(err.Error(), "newer than this program knows") || strings.Contains(err.Error(), "s3cr3t-pw") {
		t.Errorf("Open of a newer ledger: %v, want it refused as newer, without the password", err)
	}
}

// Two `payout init` at once make one ledger: the other is refused, never a second schema.
func TestPostgresCreateTwiceAtOnceMakesOne(t *testing.T) {
	t.Parallel()
	url := pgtest.New(t)
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			db, err := ledger.Create(context.Background(), url, ledger.Options{})
			if err == nil {
				db.Close()
			}
			errs <- err
		}()
	}
	a, b := <-errs, <-errs
	if (a == nil) == (b == nil) || !errors.Is(errors.Join(a, b), ledger.ErrExists) {
		t.Errorf("two Create at once: %v and %v, want one ledger and one ErrExists", a, b)
	}
}

// The schema version means the same tables on both engines.
func TestPostgresSchemaVersionIsSQLites(t *testing.T) {
	t.Parallel()
	db, _ := mustCreatePG(t)
	v, err := db.SchemaVersion(context.Background())
	if err != nil || v != ledger.LatestMigration() {
		t.Errorf("SchemaVersion %d, %v; want %d, SQLite's", v, err, ledger.LatestMigration())
	}
}

// The two engines' schemas have the same tables with the same columns in the same order, but for
// what only PostgreSQL keeps (the migrations applied, the processes paying, the shared rate) and
// what SQLite keeps hidden (the order runs were added in, its rowid; the amount in sen, a virtual
// column table_info does not list): so that a test that edits
// every column of one engine's ledger by hand answers for the other's.
func TestBothEnginesHaveTheSameColumns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sq, _ := mustOpen(t)
	pg, _ := mustCreatePG(t)
	columns := func(db *ledger.DB, tablesSQL, columnsSQL string) map[string][]string {
		out := make(map[string][]string)
		rows, err := ledger.SQLOf(db).QueryContext(ctx, tablesSQL)
		if err != nil {
			t.Fatal(err)
		}
		var tables []string
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				t.Fatal(err)
			}
			tables = append(tables, name)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		for _, table := range tables {
			rows, err := ledger.SQLOf(db).QueryContext(ctx, columnsSQL, table)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var name string
				if err := rows.Scan(&name); err != nil {
					t.Fatal(err)
				}
				out[table] = append(out[table], name)
			}
			if err := rows.Close(); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	want := columns(sq, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`,
		`SELECT name FROM pragma_table_info($1) ORDER BY cid`)
	got := columns(pg, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`,
		`SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position`)
	for _, onlyPostgres := range []string{"ledger_migrations", "processes", "rate_limits"} {
		delete(got, onlyPostgres)
	}
	got["runs"] = slices.DeleteFunc(got["runs"], func(c string) bool { return c == "insertion_order" })
	got["payouts"] = slices.DeleteFunc(got["payouts"], func(c string) bool { return c == "amount_sen" })
	if len(want) < 10 {
		t.Fatalf("SQLite's ledger has %d tables: the schema was not read", len(want))
	}
	for table, cols := range want {
		if !slices.Equal(got[table], cols) {
			t.Errorf("%s: SQLite's columns %v, PostgreSQL's %v", table, cols, got[table])
		}
		delete(got, table)
	}
	for table, cols := range got {
		t.Errorf("%s (%v) is a table of PostgreSQL's ledger alone", table, cols)
	}
}

// The same writes give the same row events on both engines: each column as SQLite's quote()
// writes it, and so the same hashes.
func TestRowEventsAreTheSameOnBothEngines(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	at := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	opts := ledger.Options{Now: func() time.Time { return at }, Logger: slog.New(slog.DiscardHandler), Actor: "ana@host", Version: "v1"}
	sq, err := ledger.Create(ctx, filepath.Join(t.TempDir(), "ledger.db"), opts)
	must(t, err)
	defer sq.Close()
	pg, err := ledger.Create(ctx, pgtest.New(t), opts)
	must(t, err)
	defer pg.Close()
	for _, db := range []*ledger.DB{sq, pg} {
		r := ledger.Run{ID: "r'1", Kind: "run", File: "O'Brien's \"Nov\".csv", FileSHA256: "sha", Source: "sha",
			StartedAt: time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC), Status: "running", Columns: []string{"Name", "it's"}}
		must(t, db.AddRun(ctx, r))
		must(t, db.FinishRun(ctx, r.ID, "finished", -3, r.StartedAt.Add(time.Minute)))
		must(t, db.StoreCallback(ctx, ledger.StoredCallback{ReceivedAt: r.StartedAt, InvoiceNo: "INV-'9", Verdict: "unknown-invoice", Payload: "{}"}))
		wantIntact(t, verify(t, db))
	}
	read := func(db *ledger.DB) string {
		var b strings.Builder
		rows, err := ledger.SQLOf(db).Query(`SELECT id, ref, facts, hash FROM row_events WHERE ref NOT LIKE 'callbacks/%' ORDER BY id`)
		must(t, err)
		defer rows.Close()
		for rows.Next() {
			var id int64
			var ref, facts, hash string
			must(t, rows.Scan(&id, &ref, &facts, &hash))
			fmt.Fprintf(&b, "%d %s %s %s\n", id, ref, facts, hash)
		}
		must(t, rows.Err())
		return b.String()
	}
	if a, b := read(sq), read(pg); a != b || !strings.Contains(a, `'O''Brien''s \"Nov\".csv'`) || !strings.Contains(a, `"exit_code":"-3"`) {
		t.Errorf("row events differ or are not quote()'s text:\nSQLite:\n%s\nPostgreSQL:\n%s", a, b)
	}
}

// VerifyChain on PostgreSQL names a payout's amount, an event's text, a run's columns, a state's
// total, a guard trigger and a table edited by hand, as on SQLite.
func TestPostgresVerifyNamesEditsByHand(t *testing.T) {
	t.Parallel()
	db, url := mustCreatePG(t)
	ps := seed(t, db, "r1", 4)
	settle(t, db, ps)
	wantIntact(t, verify(t, db))
	id := lastEventOf(t, db, ps[2].Ref)
	db = pgEdit(t, db, url, fmt.Sprintf(`UPDATE payouts SET amount = '9999.00' WHERE ref = '%s'`, ps[0].Ref),
		`DROP TRIGGER events_no_update ON events`, fmt.Sprintf(`UPDATE events SET detail = 'nothing to see' WHERE id = %d`, id),
		`UPDATE runs SET "rows" = 99 WHERE id = 'r1'`,
		// The amount edited above moved its state's total by the trigger; this moves it again.
		`UPDATE state_totals SET sen = sen + 100 WHERE state = 'SUCCEEDED'`,
		`CREATE TABLE notes (ref text)`)
	rep := verify(t, db)
	for _, want := range []struct {
		id   int64
		text string
	}{
		{0, `payout ` + ps[0].Ref + `: amount in the payouts table is "9999.00", its events say "10.00"`},
		{id, "does not match its hash"},
		{0, "runs row r1: column rows is 99, row event"},
		{0, "state_totals row of state SUCCEEDED: sen is 1000000, the payouts in that state add up to 999900 (edited by hand)"},
		{0, "schema: trigger events_no_update is missing (dropped by hand)"},
		{0, "schema: table notes is not made by the migrations (added by hand)"},
	} {
		if !findingAt(rep, want.id, want.text) {
			t.Errorf("findings %v\nwant one naming %s", rep.Findings, want.text)
		}
	}
}

// A URL's password is never shown: not in a refusal, not in a failure to connect.
func TestPostgresMessagesHideThePassword(t *testing.T) {
	t.Parallel()
	url := pgtest.New(t)
	withPassword := strings.Replace(url, "postgres://postgres@", "postgres://postgres:s3cr3t-pw@", 1)
	_, err := ledger.Open(context.Background(), withPassword, ledger.Options{})
	if err == nil || strings.Contains(err.Error(), "s3cr3t-pw") {
		t.Errorf("Open: %v, want a refusal without the password", err)
	}
	_, err = ledger.Open(context.Background(), "postgres://u:s3cr3t-pw@127.0.0.1:1/none?password=s3cr3t-pw&sslmode=disable", ledger.Options{})
	if err == nil || strings.Contains(err.Error(), "s3cr3t-pw") {
		t.Errorf("Open of a server that is not there: %v, want an error without the password", err)
	}
	if got := ledger.Redact("postgresql://u:pw@h/db?sslmode=require&password=pw"); got != "postgresql://u@h/db?sslmode=require" {
		t.Errorf("Redact = %q", got)
	}
	if !ledger.HasPassword("postgres://u:pw@h/db") || !ledger.HasPassword("postgres://u@h/db?password=pw") || ledger.HasPassword("postgres://u@h/db") {
		t.Error("HasPassword does not tell a URL with a password")
	}
}

// A purge on PostgreSQL masks as on SQLite, and rewrites the tables it touched.
func TestPostgresPurgeThenForget(t *testing.T) {
	t.Parallel()
	db, _ := mustCreatePG(t)
	ps := seed(t, db, "r1", 4)
	settle(t, db, ps)
	mask := func(string) string { return "***" }
	res, err := db.Purge(context.Background(), ledger.PurgeRequest{Before: time.Now().Add(time.Hour), MaskName: mask, MaskAccount: mask, Detail: "retention"})
	must(t, err)
	if len(res.Purged) == 0 || res.NotForgotten != nil {
		t.Fatalf("purge masked %+v, want the final payouts, forgotten", res)
	}
	var left int
	must(t, ledger.SQLOf(db).QueryRow(`SELECT count(*) FROM payouts WHERE account = '0123456789'`).Scan(&left))
	if left != len(ps)-len(res.Purged) {
		t.Errorf("%d payouts still show the account, want %d (those not final)", left, len(ps)-len(res.Purged))
	}
	wantIntact(t, verify(t, db))
}
