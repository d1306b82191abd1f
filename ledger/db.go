package ledger

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed migrations/*.sql
var migrations embed.FS

// timeFormat is fixed-width so that stored times sort as text.
const timeFormat = "2006-01-02T15:04:05.000000000Z"

// busyTimeoutMS bounds how long a connection waits for another writer (Record against the
// group-commit writer, or a second reader process) before failing with SQLITE_BUSY.
const busyTimeoutMS = 10000

// Options tunes Open and Create. The zero value is ready to use.
type Options struct {
	Now    func() time.Time // clock for created/updated/event times; time.Now when nil
	Logger *slog.Logger     // slog.Default() when nil
	// Verify checks the file before the ledger is used and refuses a damaged one (ErrDamaged):
	// its SQLite header, and its length against the pages the header counts. The checks cost the
	// same at any size; VerifyChain's quick_check reads the whole file. Commands that pay set it.
	Verify bool
	// Actor and Version stamp every event this process appends: who ran it ("user@host", or
	// "service callback") and the program's version. Empty ones are recorded as "unknown".
	Actor, Version string
}

// DB is the ledger: a SQLite file in WAL mode with synchronous=FULL. It is safe for concurrent
// use; Apply calls from many goroutines are merged into shared durable transactions.
type DB struct {
	sql  *sql.DB
	path string
	now  func() time.Time
	log  *slog.Logger
	w    *writer

	actor, version string // stamped on every event appended through this DB

	closeOnce sync.Once
	closeErr  error
}

// dsn builds the data source name. Every pooled connection runs the _pragma list when it opens,
// which is why the settings live here and not in one-off PRAGMA statements.
func dsn(path string) string {
	return path + "?_pragma=" + fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS) +
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(1)&_pragma=cell_size_check(1)&_txlock=immediate"
}

// Open opens the existing ledger at path and migrates an older schema. It never creates one
// (Create does): a missing, empty or foreign file is refused with an *OpenError, since a ledger
// that does not know what was paid would pay it all again. With opts.Verify it also checks the
// file's header and length, and refuses a damaged file (ErrDamaged).
//
// It fails when the connection does not report WAL and synchronous=FULL: a misspelt DSN option
// is silently ignored by SQLite, and the ledger's promises rest on those two.
func Open(ctx context.Context, path string, opts Options) (*DB, error) {
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

// wrapOpen names the file in err, unless err is an *OpenError, which already does.
func wrapOpen(path string, err error) error {
	var oe *OpenError
	if errors.As(err, &oe) {
		return err
	}
	return fmt.Errorf("open ledger %s: %w", path, err)
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
	db := &DB{sql: sdb, path: path, now: opts.Now, log: opts.Logger, actor: orUnknown(opts.Actor), version: orUnknown(opts.Version)}
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

// Close stops the writer (waiting for the batch being committed) and closes the file.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		werr := db.w.close()
		db.closeErr = errors.Join(werr, db.sql.Close())
	})
	return db.closeErr
}

// SchemaVersion reports the schema version of the open ledger.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := db.sql.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, err
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(timeFormat)
}

func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.Parse(timeFormat, s)
}
