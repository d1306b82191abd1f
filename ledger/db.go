package ledger

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/payout/payout/ledger/internal/dbtime"
)

//go:embed migrations/*.sql migrations/postgres/*.sql
var migrations embed.FS

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
	// A PostgreSQL ledger has no file to check: the server checks its own pages.
	Verify bool
	// Actor and Version stamp every event this process appends: who ran it ("user@host", or
	// "service callback") and the program's version. Empty ones are recorded as "unknown".
	Actor, Version string
	// Approvals is the approval policy a ledger starts with (Create only): its first event.
	Approvals int
}

// DB is the ledger: a SQLite file in WAL mode with synchronous=FULL, or a PostgreSQL database.
// It is safe for concurrent use; Apply calls from many goroutines are merged into shared durable
// transactions.
type DB struct {
	sql  *sql.DB
	eng  *engine // SQLite or PostgreSQL, chosen by Open or Create
	path string  // the file, or the URL without its password
	now  func() time.Time
	log  *slog.Logger
	w    *writer

	actor, version  string // stamped on every event appended through this DB
	createApprovals int    // the policy of a ledger being made (Options.Approvals)

	closeOnce sync.Once
	closeErr  error
}

// Open opens the existing ledger named by ledger, a SQLite file's path or a postgres:// URL, and
// migrates an older schema. It never creates one (Create does): a missing, empty or foreign file,
// or a database without the ledger's schema, is refused with an *OpenError, since a ledger that
// does not know what was paid would pay it all again. With opts.Verify it also checks a file's
// header and length, and refuses a damaged file (ErrDamaged).
func Open(ctx context.Context, ledger string, opts Options) (*DB, error) {
	if IsURL(ledger) {
		return openPostgres(ctx, ledger, opts)
	}
	return openSQLite(ctx, ledger, opts)
}

// Create makes a new ledger named by ledger, a SQLite file's path or a postgres:// URL, and
// returns it open. It refuses (ErrExists) a path where any file already is, and a database that
// already has tables.
func Create(ctx context.Context, ledger string, opts Options) (*DB, error) {
	if IsURL(ledger) {
		return createPostgres(ctx, ledger, opts)
	}
	return createSQLite(ctx, ledger, opts)
}

// wrapOpen names the ledger in err (a URL without its password), unless err is an *OpenError, which already does.
func wrapOpen(path string, err error) error {
	var oe *OpenError
	if errors.As(err, &oe) {
		return err
	}
	return fmt.Errorf("open ledger %s: %w", Redact(path), err)
}

// Redact is ledger's name as messages show it: a URL without its password (in the user part or
// a password parameter); a path as it is.
func Redact(ledger string) string {
	if !IsURL(ledger) {
		return ledger
	}
	u, err := url.Parse(ledger)
	if err != nil {
		return "(a postgres:// URL that does not parse)"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.User(u.User.Username())
	}
	if q := u.Query(); q.Has("password") {
		q.Del("password")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// HasPassword says whether ledger is a URL that carries a password.
func HasPassword(ledger string) bool {
	if !IsURL(ledger) {
		return false
	}
	u, err := url.Parse(ledger)
	if err != nil {
		return strings.Contains(ledger, "@") || strings.Contains(ledger, "password")
	}
	_, ok := u.User.Password()
	return ok || u.Query().Has("password")
}

// beginWrite starts a write transaction that holds the chain: on PostgreSQL its advisory lock
// is taken before anything is read, so that the head it reads is still the head when it appends.
func (db *DB) beginWrite(ctx context.Context) (*sql.Tx, error) {
	var tx *sql.Tx
	err := db.holdChain(ctx, func() (err error) {
		tx, err = db.sql.BeginTx(ctx, nil)
		return err
	}, func(stmt string) error {
		_, err := tx.ExecContext(ctx, stmt)
		return err
	}, func() { tx.Rollback() })
	if err != nil {
		return nil, err
	}
	return tx, nil
}

// Close stops the writer (waiting for the batch being committed) and closes the file.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		werr := db.w.close()
		db.closeErr = errors.Join(werr, db.sql.Close())
	})
	return db.closeErr
}

// fmtTime and parseTime write and read the times the ledger's tables hold.
var fmtTime, parseTime = dbtime.Format, dbtime.Parse
