package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Why a file was refused as a ledger. An *OpenError carries one of them; callers decide with
// errors.Is. None of them is cured by trying again.
var (
	ErrNoLedger    = errors.New("no ledger")
	ErrEmptyLedger = errors.New("the file is empty (0 bytes) and is not a ledger")
	ErrNotLedger   = errors.New("not a payout ledger")
	ErrDamaged     = errors.New("the ledger is damaged")
	ErrExists      = errors.New("a file is already there")
	// ErrRefused is a PostgreSQL server that refused the ledger's user, password or database.
	ErrRefused = errors.New("the database server refused the connection")
)

// OpenError says which file Open or Create refused and why. It unwraps to one of ErrNoLedger,
// ErrEmptyLedger, ErrNotLedger, ErrDamaged, ErrExists or ErrRefused.
type OpenError struct {
	Path   string // absolute, so that a message names the file whatever the working directory
	Err    error
	Detail string // what was seen (quick_check's findings, say); may be empty
}

func (e *OpenError) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("%s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("%s: %v (%s)", e.Path, e.Err, e.Detail)
}

func (e *OpenError) Unwrap() error { return e.Err }

func refuse(path string, reason error, detail string) *OpenError {
	if IsURL(path) {
		path = Redact(path)
	} else if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return &OpenError{Path: path, Err: reason, Detail: detail}
}

// sqliteMagic opens every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// Probe looks at path without opening it as a database: ErrNoLedger when nothing is there,
// ErrEmptyLedger for a 0-byte file (a truncated copy looks like that, and SQLite would take it
// for a new database), ErrNotLedger when it is not a SQLite file. Nil means Open may try it: a
// postgres:// URL is always nil, since only connecting tells (Open refuses a database without a
// ledger with ErrNoLedger).
func Probe(path string) error {
	if IsURL(path) {
		return nil
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return refuse(path, ErrNoLedger, "")
	case err != nil:
		return fmt.Errorf("ledger %s: %w", path, err)
	case !fi.Mode().IsRegular():
		return refuse(path, ErrNotLedger, "not a regular file")
	case fi.Size() == 0:
		return refuse(path, ErrEmptyLedger, "")
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("ledger %s: %w", path, err)
	}
	defer f.Close()
	head := make([]byte, len(sqliteMagic))
	_, err = io.ReadFull(f, head)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || err == nil && string(head) != sqliteMagic:
		return refuse(path, ErrNotLedger, "not a SQLite database")
	case err != nil:
		return fmt.Errorf("ledger %s: %w", path, err)
	}
	return nil
}

// createSQLite is Create of a file: the file (mode 0600; SQLite gives its -wal and -shm files
// the same mode), then the schema. It refuses, with ErrExists, a path where any file already
// is, even an empty one, and a leftover -wal or -journal file, which SQLite would replay into
// the new ledger.
func createSQLite(ctx context.Context, path string, opts Options) (*DB, error) {
	if err := checkName(path); err != nil {
		return nil, err
	}
	for _, side := range []string{path + "-wal", path + "-journal"} {
		if _, err := os.Lstat(side); err == nil {
			return nil, refuse(path, ErrExists, fmt.Sprintf("%s is left from an earlier database; move it away first", filepath.Base(side)))
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, refuse(path, ErrExists, existingDetail(path))
	}
	if err != nil {
		return nil, fmt.Errorf("create ledger: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("create ledger: %w", err)
	}
	db, err := open(ctx, path, opts)
	if err == nil {
		err = syncDir(filepath.Dir(path))
		if err != nil {
			db.Close()
		}
	}
	if err != nil {
		// Nothing was ever recorded in it: leave no half-made ledger behind to be taken for one.
		for _, name := range []string{path, path + "-wal", path + "-shm"} {
			_ = os.Remove(name)
		}
		return nil, fmt.Errorf("create ledger %s: %w", path, err)
	}
	return db, nil
}

// warnIfShared warns when others may read the ledger (a copy restored with a loose umask, say):
// it holds names and account numbers, and SQLite gives the -wal and -shm files the same mode.
func warnIfShared(path string, log *slog.Logger) {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm()&0o077 == 0 {
		return
	}
	if log == nil {
		log = slog.Default()
	}
	log.Warn("the ledger is readable by others: it holds names and account numbers; restrict it with chmod 600",
		"ledger", path, "mode", fmt.Sprintf("%04o", fi.Mode().Perm()))
}

func existingDetail(path string) string {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return "not a regular file"
	}
	if fi.Size() == 0 {
		return "an empty file, perhaps a truncated copy of a ledger"
	}
	return fmt.Sprintf("%d bytes", fi.Size())
}

// syncDir makes the new file's directory entry durable, so that a crash right after
// `payout init` cannot lose the ledger while the next run finds none.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func checkName(path string) error {
	if path == "" || strings.ContainsAny(path, "?#") {
		return fmt.Errorf("ledger: unusable file name %q", path)
	}
	return nil
}

// checkSchema makes sure that the SQLite file at path is a payout ledger before Open's
// connections touch it: they switch the file to WAL, which must not happen to someone else's
// database. Its own connection only reads.
func checkSchema(ctx context.Context, path string) error {
	sdb, err := sql.Open("sqlite", path+fmt.Sprintf("?_pragma=busy_timeout(%d)&_pragma=query_only(1)", busyTimeoutMS))
	if err != nil {
		return err
	}
	defer sdb.Close()
	var version, tables int
	if err := sdb.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return classify(path, err)
	}
	err = sdb.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('payouts', 'events', 'runs')").Scan(&tables)
	if err != nil {
		return classify(path, err)
	}
	if version == 0 || tables != 3 {
		return refuse(path, ErrNotLedger, "a SQLite database without the ledger's tables")
	}
	return nil
}

// classify turns SQLite's "database disk image is malformed" and "file is not a database" into
// the ledger's refusals; other errors pass unchanged.
func classify(path string, err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_CORRUPT:
		return refuse(path, ErrDamaged, err.Error())
	case sqlite3.SQLITE_NOTADB:
		return refuse(path, ErrNotLedger, err.Error())
	}
	return err
}
