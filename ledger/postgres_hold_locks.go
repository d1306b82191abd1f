package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// The namespaces of the session advisory locks a hold takes. A key is a bigint drawn from the
// SHA-256 of its namespace and its name (lockKey), so that a process, an input file and an inbox
// never share one, and no other application's small integer keys meet ours.
const (
	nsProcess = "payout/process" // a process's lifetime, by its random ID
	nsFile    = "payout/file"    // an input being paid, by its SHA-256
	nsInbox   = "payout/inbox"   // the leading watcher of an inbox, by its absolute path
)

// lockKey is the advisory lock key of name in namespace.
func lockKey(namespace, name string) int64 {
	sum := sha256.Sum256([]byte(namespace + "\x00" + name))
	return int64(binary.BigEndian.Uint64(sum[:8]))
}

// PayFile takes, without waiting, the lock of the input whose SHA-256 is given, and keeps it
// until DonePaying (as often as PayFile: runs of one process may overlap) or the hold's end; the
// registry row records it. While another process holds it, PayFile returns a *lockedError naming
// that process's host and pid.
func (h *pgHold) PayFile(ctx context.Context, fileSHA256 string) error {
	ok, holder, err := h.hold(ctx, nsFile, "paying", fileSHA256, h.files)
	if err != nil {
		return fmt.Errorf("keep other processes off the file: %w", err)
	}
	if !ok {
		return &lockedError{File: fileSHA256, Holder: holder.note()}
	}
	return nil
}

// DonePaying ends what PayFile took: released by the last run of this process that holds the
// file, it may be paid by another process again (a rerun, which resumes from the ledger).
func (h *pgHold) DonePaying(ctx context.Context, fileSHA256 string) error {
	ctx, cancel := sessionContext(ctx)
	defer cancel()
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.lost:
		// The session, and every lock of it, is gone already: nothing is left to release.
		delete(h.files, fileSHA256)
		return nil
	default:
	}
	switch n := h.files[fileSHA256]; {
	case h.shut || n == 0:
		return nil
	case n > 1:
		h.files[fileSHA256] = n - 1
		return nil
	}
	delete(h.files, fileSHA256)
	if _, err := h.conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", lockKey(nsFile, fileSHA256)); err != nil {
		return fmt.Errorf("let other processes pay the file: %w", err)
	}
	if _, err := h.conn.Exec(ctx, "UPDATE processes SET paying = array_remove(paying, $2) WHERE id = $1", h.self.ID, fileSHA256); err != nil {
		return fmt.Errorf("let other processes pay the file: %w", err)
	}
	return nil
}

// Leader is a hold that can make its process the one leader of an inbox that several hosts
// share (folder mode); the PostgreSQL hold is one.
type Leader interface {
	// LeadInbox tries, without waiting, to lead the inbox at the absolute path given, until the
	// hold ends. While another process leads it, it returns false and that process (its Host,
	// PID and Started; its ID is not told).
	LeadInbox(ctx context.Context, inbox string) (bool, Process, error)
}

// LeadInbox makes the process the inbox's leader while no other process is.
func (h *pgHold) LeadInbox(ctx context.Context, inbox string) (bool, Process, error) {
	ok, holder, err := h.hold(ctx, nsInbox, "leads", inbox, h.leads)
	if err != nil {
		return false, Process{}, fmt.Errorf("lead the inbox %s: %w", inbox, err)
	}
	return ok, holder, nil
}

// sessionContext is the context of a statement on the hold's own session: not the caller's
// cancellation (pgx ends a connection whose query is cancelled, and with it every lock of the
// process, while the process still finishes what it sent), but a bound.
func sessionContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
}

// hold takes the lock of name in namespace on the session, once, and records name in the
// registry's column; held counts the takes. The lock held elsewhere, it returns false and the
// process that holds it. A holder that ends between the try and the look-up is tried again.
func (h *pgHold) hold(ctx context.Context, namespace, column, name string, held map[string]int) (bool, Process, error) {
	ctx, cancel := sessionContext(ctx)
	defer cancel()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.shut {
		return false, Process{}, errors.New("the ledger's hold is closed")
	}
	if held[name] > 0 {
		// Held while the session lasts: one that ended (the server restarted or gave up on this
		// host) holds nothing any more, and another process may have taken it.
		if err := h.conn.Ping(ctx); err != nil {
			return false, Process{}, fmt.Errorf("the ledger's session, which held it, is gone: %w", err)
		}
		held[name]++
		return true, Process{}, nil
	}
	key := lockKey(namespace, name)
	var holder Process
	for try := range 3 {
		if try > 0 {
			// The holder registers what it holds right after it takes the lock, and unregisters
			// it right after it lets go: give either a moment to land before asking again.
			select {
			case <-ctx.Done():
				return false, holder, ctx.Err()
			case <-time.After(time.Duration(try) * 50 * time.Millisecond):
			}
		}
		var ok bool
		if err := h.conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&ok); err != nil {
			return false, Process{}, err
		}
		if ok {
			held[name] = 1
			// column is one of this file's names, never input.
			_, err := h.conn.Exec(ctx, "UPDATE processes SET "+column+" = array_append("+column+", $2) WHERE id = $1", h.self.ID, name)
			return true, Process{}, err
		}
		found, err := h.holder(ctx, key, column, name)
		if err != nil || found != nil {
			if found != nil {
				holder = *found
			}
			return false, holder, err
		}
	}
	return false, holder, nil
}

// holder is the registered process whose session holds the lock key and has name in column, or
// nil when none does (any more).
func (h *pgHold) holder(ctx context.Context, key int64, column, name string) (*Process, error) {
	u := uint64(key)
	var p Process
	var pid int32
	err := h.conn.QueryRow(ctx, `SELECT host, pid, started FROM processes
		WHERE $3 = ANY(`+column+`) AND backend_pid IN (SELECT l.pid FROM pg_locks l
			WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.classid = $1 AND l.objid = $2
			AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))
		ORDER BY started DESC LIMIT 1`, uint32(u>>32), uint32(u), name).Scan(&p.Host, &pid, &p.Started)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find who holds it: %w", err)
	}
	p.PID = int(pid)
	return &p, nil
}

// note is how a lockedError names a holder, as the SQLite lock file does; empty when unknown.
func (p Process) note() string {
	if p.PID == 0 && p.Host == "" {
		return ""
	}
	return fmt.Sprintf("pid=%d host=%s since=%s", p.PID, p.Host, p.Started.UTC().Format(time.RFC3339))
}
