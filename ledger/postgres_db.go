package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
)

// A ledger in a PostgreSQL database: its own migrations (migrations/postgres), applied in name
// order, each once, recorded in ledger_migrations with the schema version they bring, all in one
// transaction under an advisory lock, so that two `payout init` at once cannot both make it.

// postgresMigrationsDir holds PostgreSQL's migrations, NNNN_name.sql. A file whose first line is
// "-- schema: N" brings the ledger's tables to SQLite's schema version N; the others add tables
// of their own (a process registry, rate limits) and leave the version as it was.
const postgresMigrationsDir = "migrations/postgres"

// ledgerMigrationsTable records each migration applied: made by Create, its presence is what
// tells a payout ledger from another database.
const ledgerMigrationsTable = `CREATE TABLE ledger_migrations (
	version        integer PRIMARY KEY,
	name           text NOT NULL,
	schema_version integer NOT NULL,
	applied_at     text NOT NULL
)`

// openPostgres opens the ledger in the database at url: it must have the ledger's schema, not a
// newer one than this program knows; an older one is migrated.
func openPostgres(ctx context.Context, url string, opts Options) (*DB, error) {
	opts.Approvals = 0 // only a ledger being made takes a policy from its options
	db, err := connectPostgres(ctx, url, opts)
	if err != nil {
		return nil, err
	}
	if err := db.migratePostgres(ctx, false); err != nil {
		db.sql.Close()
		return nil, wrapOpen(url, err)
	}
	return db.start(ctx, url)
}

// createPostgres makes the ledger's schema in the database at url, which must have no tables.
func createPostgres(ctx context.Context, url string, opts Options) (*DB, error) {
	db, err := connectPostgres(ctx, url, opts)
	if err != nil {
		return nil, err
	}
	if err := db.migratePostgres(ctx, true); err != nil {
		db.sql.Close()
		var oe *OpenError
		if errors.As(err, &oe) {
			return nil, err
		}
		return nil, fmt.Errorf("create ledger %s: %w", Redact(url), err)
	}
	return db.start(ctx, url)
}

func connectPostgres(ctx context.Context, url string, opts Options) (*DB, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	warning, err := checkTransport(url)
	if err != nil {
		return nil, err
	}
	if warning != "" {
		opts.Logger.Warn(warning, "ledger", Redact(url))
	}
	cfg, err := SessionConfig(url, "ledger")
	if err != nil {
		return nil, err
	}
	sdb := stdlib.OpenDB(*cfg)
	if err := sdb.PingContext(ctx); err != nil {
		sdb.Close()
		// The driver's message could quote the URL: it is shown without the password.
		msg := err.Error()
		if HasPassword(url) {
			msg = strings.ReplaceAll(msg, url, Redact(url))
		}
		if refusedAccess(err) {
			return nil, refuse(url, ErrRefused, connectAdvice(cfg, err))
		}
		return nil, fmt.Errorf("ledger %s: cannot connect (%s): %s", Redact(url), connectAdvice(cfg, err), msg)
	}
	return &DB{sql: sdb, eng: postgresEngine, path: Redact(url), now: opts.Now, log: opts.Logger,
		actor: orUnknown(opts.Actor), version: orUnknown(opts.Version), createApprovals: opts.Approvals}, nil
}

// ledgerSchema is the schema that holds a PostgreSQL ledger's tables.
const ledgerSchema = "public"

// pinSchema makes the sessions of a connection configuration's runtime parameters look tables
// up in the ledger's schema alone (then the session's own temporary one, which no other session
// can write): the server's default search path, "$user", public, would read a table of the same
// name in a schema named after the role first, and whoever may create that schema would choose
// what a command reads.
func pinSchema(params map[string]string) {
	params["search_path"] = ledgerSchema + ", pg_temp"
}

// start starts the writer of a connected, migrated ledger.
func (db *DB) start(ctx context.Context, url string) (*DB, error) {
	w, err := newWriter(ctx, db)
	if err != nil {
		db.sql.Close()
		return nil, wrapOpen(Redact(url), err)
	}
	db.w = w
	return db, nil
}

// migratePostgres applies the migrations the database has not had, in one transaction under the
// schema's advisory lock. create says the database must have no ledger yet (Create); otherwise
// it must have one (Open).
func (db *DB) migratePostgres(ctx context.Context, create bool) error {
	files, err := postgresMigrations()
	if err != nil {
		return err
	}
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock("+strconv.Itoa(schemaLockKey)+")"); err != nil {
		return err
	}
	applied, err := db.checkPostgresLedger(ctx, tx, create, files)
	if err != nil {
		return err
	}
	for _, f := range files {
		if f.number <= applied {
			continue
		}
		if _, err := tx.ExecContext(ctx, f.body); err != nil {
			return fmt.Errorf("migrate %s: %w", f.name, err)
		}
		if err := db.afterMigration(ctx, tx, f.name); err != nil {
			return fmt.Errorf("migrate %s: %w", f.name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO ledger_migrations (version, name, schema_version, applied_at)
			VALUES ($1, $2, $3, $4)`, f.number, f.name, f.schema, fmtTime(db.now())); err != nil {
			return fmt.Errorf("migrate %s: %w", f.name, err)
		}
	}
	if applied > 0 && applied < files[len(files)-1].number {
		db.log.Info("ledger schema upgraded", "ledger", db.path, "from", applied, "to", files[len(files)-1].number)
	}
	return tx.Commit()
}

// checkPostgresLedger returns the last migration the database had (0 for none), refusing a
// database that is not what create expects, or newer than files.
func (db *DB) checkPostgresLedger(ctx context.Context, tx *sql.Tx, create bool, files []pgMigration) (int, error) {
	var tables []string
	tables, err := scanAll(ctx, tx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() ORDER BY table_name`, func(s scanner) (string, error) {
		var n string
		return n, s.Scan(&n)
	})
	if err != nil {
		return 0, err
	}
	hasLedger := false
	for _, t := range tables {
		hasLedger = hasLedger || t == "ledger_migrations"
	}
	switch {
	case create && hasLedger:
		return 0, refuse(db.path, ErrExists, "the database already holds a payout ledger")
	case create && len(tables) > 0:
		return 0, refuse(db.path, ErrExists, "the database already has tables ("+strings.Join(tables, ", ")+"); give the ledger a database of its own")
	case create:
		_, err := tx.ExecContext(ctx, ledgerMigrationsTable)
		return 0, err
	case !hasLedger && len(tables) == 0:
		return 0, refuse(db.path, ErrNoLedger, "the database has no ledger; run `payout init` with that URL to make one")
	case !hasLedger:
		return 0, refuse(db.path, ErrNotLedger, "a PostgreSQL database without the ledger's tables")
	}
	var applied int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(max(version), 0) FROM ledger_migrations`).Scan(&applied); err != nil {
		return 0, err
	}
	if latest := files[len(files)-1].number; applied > latest {
		return 0, fmt.Errorf("migrate: schema version %d is newer than this program knows (%d)", applied, latest)
	}
	return applied, nil
}

// pgMigration is one embedded PostgreSQL migration.
type pgMigration struct {
	name           string
	number, schema int // its NNNN; the schema version the ledger has after it
	body           string
}

// postgresMigrations are the embedded PostgreSQL migrations in order, each with the schema
// version it leaves.
func postgresMigrations() ([]pgMigration, error) {
	names, err := fs.Glob(migrations, postgresMigrationsDir+"/*.sql")
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, errors.New("migrate: no PostgreSQL migrations embedded")
	}
	sort.Strings(names)
	var out []pgMigration
	schema := 0
	for _, name := range names {
		body, err := migrations.ReadFile(name)
		if err != nil {
			return nil, err
		}
		first, _, _ := strings.Cut(string(body), "\n")
		if v, ok := strings.CutPrefix(first, "-- schema: "); ok {
			if schema, err = strconv.Atoi(strings.TrimSpace(v)); err != nil {
				return nil, fmt.Errorf("migration %s: its first line %q is not -- schema: N", name, first)
			}
		}
		out = append(out, pgMigration{name: name, number: migrationNumber(name), schema: schema, body: string(body)})
	}
	return out, nil
}
