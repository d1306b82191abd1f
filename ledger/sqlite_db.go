package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Opening a SQLite file: its connections' pragmas, checked on each, and its migrations, which
// are SQLite's schema (PRAGMA user_version counts them).

// dsn builds the data source name. Every pooled connection runs the _pragma list when it opens,
// which is why the settings live here and not in one-off PRAGMA statements.
func dsn(path string) string {
	return path + "?_pragma=" + fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS) +
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(1)&_pragma=cell_size_check(1)&_txlock=immediate"
}

// openSQLite is Open of a file. It fails when the connection does not report WAL and
// synchronous=FULL: a misspelt DSN option is silently ignored by SQLite, and the ledger's
// promises rest on those two.
func openSQLite(ctx context.Context, path string, opts Options) (*DB, error) {
	opts.Approvals = 0 // only a ledger being made takes a policy from its options
	if err := checkName(path); err != nil {
		return nil, err
	}
	if err := Probe(path); err != nil {
		return nil, err
	}
	warnIfShared(path, opts.Logger)
	if opts.Verify {
		if err := checkFile(path); err != nil {
			return nil, err
		}
	}
	if err := checkSchema(ctx, path); err != nil {
		return nil, wrapOpen(path, err)
	}
	db, err := open(ctx, path, opts)
	if err != nil {
		return nil, wrapOpen(path, err)
	}
	return db, nil
}

// open connects to the SQLite file at path and migrates its schema.
func open(ctx context.Context, path string, opts Options) (*DB, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	sdb, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, err
	}
	db := &DB{sql: sdb, eng: sqliteEngine, path: path, now: opts.Now, log: opts.Logger, actor: orUnknown(opts.Actor), version: orUnknown(opts.Version),
		createApprovals: opts.Approvals}
	err = db.checkPragmas(ctx)
	if err == nil {
		err = db.migrate(ctx)
	}
	if err == nil {
		db.w, err = newWriter(ctx, db)
	}
	if err != nil {
		sdb.Close()
		return nil, classify(path, err)
	}
	return db, nil
}

func (db *DB) checkPragmas(ctx context.Context) error {
	var sync int
	if err := db.sql.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil {
		return err
	}
	if sync != 2 {
		return fmt.Errorf("PRAGMA synchronous is %d, want 2 (FULL)", sync)
	}
	var mode string
	if err := db.sql.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("PRAGMA journal_mode is %q, want wal", mode)
	}
	var cells int
	if err := db.sql.QueryRowContext(ctx, "PRAGMA cell_size_check").Scan(&cells); err != nil {
		return err
	}
	if cells != 1 {
		return fmt.Errorf("PRAGMA cell_size_check is %d, want 1", cells)
	}
	return nil
}

// migrate applies, in one transaction, every embedded migration newer than PRAGMA user_version.
// Migration files are named NNNN_name.sql and version N is the file's number: numbers need not
// be contiguous, and a ledger at version V gets the files numbered above V, in order.
func (db *DB) migrate(ctx context.Context) error {
	names, err := migrationNames()
	if err != nil {
		return err
	}
	latest := migrationNumber(names[len(names)-1])
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	var version int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if version > latest {
		return fmt.Errorf("migrate: schema version %d is newer than this program knows (%d)", version, latest)
	}
	for _, name := range names {
		n := migrationNumber(name)
		if n <= version {
			continue
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			return fmt.Errorf("migrate %s: %w", name, err)
		}
		if err := db.afterMigration(ctx, tx, name); err != nil {
			return fmt.Errorf("migrate %s: %w", name, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", n)); err != nil {
			return fmt.Errorf("migrate %s: %w", name, err)
		}
	}
	if version > 0 && version < latest {
		db.log.Info("ledger schema upgraded", "from", version, "to", latest)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// migrationNames are the embedded migrations in order.
func migrationNames() ([]string, error) {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, errors.New("migrate: no migrations embedded")
	}
	sort.Strings(names)
	return names, nil
}

// migrationNumber is the NNNN of migrations/NNNN_name.sql.
func migrationNumber(name string) int {
	base := path.Base(name)
	n, err := strconv.Atoi(base[:strings.IndexByte(base, '_')])
	if err != nil {
		panic("migration " + name + " is not named NNNN_name.sql") // embedded at build time: a test opens every ledger
	}
	return n
}

// LatestMigration is the schema version of a ledger this build made: its last migration's number.
func LatestMigration() int {
	names, err := migrationNames()
	if err != nil {
		return 0
	}
	return migrationNumber(names[len(names)-1])
}

// schemaVersion reports the schema version of the open ledger: the number of SQLite's last
// migration its tables are, on either engine.
func (db *DB) schemaVersion(ctx context.Context) (int, error) {
	var v int
	err := db.sql.QueryRowContext(ctx, db.eng.schemaVersionSQL).Scan(&v)
	return v, err
}
