package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrWALKept says that the write-ahead log could not be emptied: another connection was reading
// from it the whole time, and it may still hold what was there before a purge.
var ErrWALKept = errors.New("the ledger's write-ahead log (-wal) could not be emptied")

// walKeptError says how far forgetFreed got. It unwraps to ErrWALKept.
type walKeptError struct {
	Path   string
	Frames int // frames left in the -wal
	Waited time.Duration
}

func (e *walKeptError) Error() string {
	return fmt.Sprintf("%v: %s-wal holds %d page(s) after waiting %s for the processes that read the ledger (payout callbacks, watch, status)",
		ErrWALKept, e.Path, e.Frames, e.Waited)
}

func (e *walKeptError) Unwrap() error { return ErrWALKept }

// forgetFreedSQLite makes what was deleted or overwritten unreadable from the ledger's files, as a
// purge promises: VACUUM rewrites the database from its live rows only (freed pages and the
// free space inside pages keep the old bytes of masked rows otherwise), with secure_delete on,
// and a TRUNCATE checkpoint copies the log into the database and empties the -wal, which holds
// old versions of pages. The checkpoint waits up to wait for other connections to stop reading
// from the log; when they do not, it returns an error that is ErrWALKept (errors.Is), saying how
// many pages the -wal holds, and the data is still in the -wal until a later purge (or the
// last connection's close) empties it.
func (db *DB) forgetFreedSQLite(ctx context.Context, wait time.Duration) error {
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return fmt.Errorf("forget: %w", err)
	}
	defer conn.Close()
	defer conn.ExecContext(context.Background(), fmt.Sprintf("PRAGMA busy_timeout = %d", busyTimeoutMS))
	defer conn.ExecContext(context.Background(), "PRAGMA secure_delete = OFF")
	for _, stmt := range []string{"PRAGMA secure_delete = ON", "VACUUM",
		fmt.Sprintf("PRAGMA busy_timeout = %d", max(wait.Milliseconds(), 1))} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("forget: %s: %w", stmt, err)
		}
	}
	var busy, frames, copied int
	if err := conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &frames, &copied); err != nil {
		return fmt.Errorf("forget: checkpoint: %w", err)
	}
	if busy != 0 || frames > 0 {
		return &walKeptError{Path: db.path, Frames: max(frames, 0), Waited: wait}
	}
	return nil
}
