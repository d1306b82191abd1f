package ledger

import (
	"database/sql"
	"embed"
	"errors"
	"log/slog"
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
	eng  *engine // SQLite or PostgreSQL, chosen by Open or Create
	path string  // the file, or the URL without its password
	now  func() time.Time
	log  *slog.Logger
	w    *writer

	actor, version string // stamped on every event appended through this DB

	closeOnce sync.Once
	closeErr  error
}

// Close stops the writer (waiting for the batch being committed) and closes the file.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		werr := db.w.close()
		db.closeErr = errors.Join(werr, db.sql.Close())
	})
	return db.closeErr
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
