package ledger

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pgHold is a paying process's hold on a PostgreSQL ledger: a session of its own (one native
// connection, no pool), kept for the process's lifetime, in which the process is registered
// (table processes) and holds a session advisory lock keyed by its random ID. The server ends the
// session, and so releases every lock of it, when the process exits or dies, or when its host
// stops answering (keepalives, see holdConfig): whether a process runs is whether its lock is held.
// Its methods may be called from several goroutines.
type pgHold struct {
	mu       sync.Mutex // one statement at a time on each connection
	cfg      *pgx.ConnConfig
	conn     *pgx.Conn // the session whose locks are this process's
	probe    *pgx.Conn // another session, opened when first needed: tries other processes' locks
	self     Process
	files    map[string]int // inputs held, by the runs holding each (PayFile, DonePaying)
	leads    map[string]int // inboxes led (LeadInbox)
	lost     chan struct{}  // closed once the session is found gone (markLost)
	lostOnce sync.Once
	stop     chan struct{} // closed by Close: ends the heartbeat
	done     sync.WaitGroup
	shut     bool

	leaseMu     sync.Mutex // guards the two below (Confirm)
	nextRenewal *renewal   // the round trip the callers of Confirm wait for, not yet sent
	renewing    bool       // a goroutine sends them
	// lastAnswered is when (bootNow) the last round trip answered was sent: the lease (Held).
	lastAnswered time.Duration
}

// heartbeat is how often a hold makes sure its own session is still there (Lost).
const heartbeat = 2 * time.Second

// takePostgres connects the hold's session, takes the process's lock and registers it.
func takePostgres(ctx context.Context, url string) (*pgHold, error) {
	cfg, err := SessionConfig(url, "hold")
	if err != nil {
		return nil, err
	}
	conn, err := connectHold(ctx, cfg)
	if err != nil {
		return nil, err
	}
	h := &pgHold{cfg: cfg, conn: conn, self: NewProcess(), files: make(map[string]int), leads: make(map[string]int),
		lost: make(chan struct{}), stop: make(chan struct{})}
	if err := h.register(ctx); err != nil {
		return nil, errors.Join(err, conn.Close(context.WithoutCancel(ctx)))
	}
	h.done.Add(1)
	go h.beat()
	return h, nil
}

// connectHold opens one session with the settings that make a dead peer noticed in seconds.
func connectHold(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		if refusedAccess(err) {
			return nil, refuse(redactedURL(cfg), ErrRefused, connectAdvice(cfg, err))
		}
		return nil, fmt.Errorf("hold the PostgreSQL ledger at %s: %w (%s)", redactedURL(cfg), err, connectAdvice(cfg, err))
	}
	// While a query runs, the server looks every so often whether its client is still there; the
	// keepalives cover the idle session. Older servers (before 14) lack it and rely on those.
	_, err = conn.Exec(ctx, fmt.Sprintf("SET client_connection_check_interval = %d", checkInterval.Milliseconds()))
	var pe *pgconn.PgError
	if err != nil && !(errors.As(err, &pe) && pe.Code == "42704") { // undefined_object: before PostgreSQL 14
		return nil, errors.Join(fmt.Errorf("hold the PostgreSQL ledger at %s: %w", redactedURL(cfg), err), conn.Close(ctx))
	}
	return conn, nil
}

// register takes the process's lock, sweeps the rows of processes whose session ended and
// inserts this one's.
func (h *pgHold) register(ctx context.Context) error {
	key := lockKey(nsProcess, h.self.ID)
	var ok bool
	if err := h.conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&ok); err != nil {
		return h.failed("take the process's lock", err)
	}
	if !ok { // 64 random bits met a live process's: never in practice, and never to be shared
		return fmt.Errorf("hold the PostgreSQL ledger at %s: another process holds this process's random ID; start it again", redactedURL(h.cfg))
	}
	if _, err := h.conn.Exec(ctx, `DELETE FROM processes p WHERE NOT EXISTS (SELECT 1 FROM pg_locks l
		WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND (l.classid::bigint << 32 | l.objid::bigint) = p.lock_key)`); err != nil {
		return h.failed("sweep the processes that ended", err)
	}
	_, err := h.conn.Exec(ctx, `INSERT INTO processes (id, claimant, host, pid, started, lock_key, backend_pid)
		VALUES ($1, $2, $3, $4, $5, $6, pg_backend_pid())`,
		h.self.ID, h.self.Claimant(), h.self.Host, h.self.PID, h.self.Started, key)
	if err != nil {
		return h.failed("register the process", err)
	}
	return nil
}

// failed says what a statement of the hold failed to do, and what to do about a ledger whose
// database has no registry of processes.
func (h *pgHold) failed(what string, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P01" { // undefined_table
		// What `payout status` and Open say of the same database, with their exit code.
		var tables int
		if cerr := h.conn.QueryRow(context.Background(), `SELECT count(*) FROM information_schema.tables
			WHERE table_schema = current_schema()`).Scan(&tables); cerr == nil && tables == 0 {
			return refuse(redactedURL(h.cfg), ErrNoLedger, "the database has no ledger; run `payout init` with that URL to make one")
		}
		return refuse(redactedURL(h.cfg), ErrNotLedger, "a PostgreSQL database without the ledger's tables")
	}
	return fmt.Errorf("hold the PostgreSQL ledger at %s: %s: %w", redactedURL(h.cfg), what, err)
}

// Self is the process holding it.
func (h *pgHold) Self() Process { return h.self }

// Lost is closed once the hold's session is found gone (the server restarted or stopped
// answering): every lock of it is gone too, and the process must stop paying, as it would on a
// crash; a new start resumes from the ledger.
func (h *pgHold) Lost() <-chan struct{} { return h.lost }

// beat checks the session every heartbeat until Close, and closes lost when it is gone.
func (h *pgHold) beat() {
	defer h.done.Done()
	t := time.NewTicker(heartbeat)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		h.mu.Lock()
		if h.shut {
			h.mu.Unlock()
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), heartbeat+keepIdle)
		sent := bootNow()
		err := h.conn.Ping(ctx)
		cancel()
		h.mu.Unlock()
		if err != nil {
			h.markLost()
			return
		}
		h.renewed(sent)
	}
}

// Alive reports whether the process claimant names still holds its lock: tried on another
// session, the lock is refused while that process's session lasts; taken, it is released at once
// and the process is gone. A claimant that does not name a process as Process.Claimant does is
// reported alive: its rows are left alone, never sent twice.
func (h *pgHold) Alive(ctx context.Context, claimant string) (bool, error) {
	id, ok := claimantID(claimant)
	if !ok {
		return true, nil
	}
	if id == h.self.ID {
		return true, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	held, err := h.heldElsewhere(ctx, lockKey(nsProcess, id))
	if err != nil {
		return false, fmt.Errorf("is process %s alive: %w", claimant, err)
	}
	return held, nil
}

// OthersPay reports whether another process is paying the file whose SHA-256 is given now: it
// holds the file's lock (PayFile). Never while this one holds it.
func (h *pgHold) OthersPay(ctx context.Context, fileSHA256 string) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.files[fileSHA256] > 0 {
		return false, nil
	}
	held, err := h.heldElsewhere(ctx, lockKey(nsFile, fileSHA256))
	if err != nil {
		return false, fmt.Errorf("is another process paying the file: %w", err)
	}
	return held, nil
}

// heldElsewhere reports whether a session holds the lock key, tried on the probe session: a lock
// taken there is released at once. h.mu is held.
func (h *pgHold) heldElsewhere(ctx context.Context, key int64) (bool, error) {
	if h.shut {
		return false, errors.New("the ledger's hold is closed")
	}
	if h.probe == nil || h.probe.IsClosed() {
		probe, err := connectHold(ctx, h.cfg)
		if err != nil {
			return false, err
		}
		h.probe = probe
	}
	var taken bool
	if err := h.probe.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&taken); err != nil {
		return false, err
	}
	if !taken {
		return true, nil
	}
	if _, err := h.probe.Exec(ctx, "SELECT pg_advisory_unlock($1)", key); err != nil {
		// Ending the session releases it: a lock kept would make its holder look alive forever.
		_ = h.probe.Close(ctx)
		return false, fmt.Errorf("release the lock just tried: %w", err)
	}
	return false, nil
}

// claimantID is the random ID in a claimant as Process.Claimant writes it.
func claimantID(claimant string) (string, bool) {
	fields := make(map[string]string)
	for _, f := range strings.Fields(claimant) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return "", false
		}
		fields[k] = v
	}
	_, host := fields["host"]
	_, pidErr := strconv.Atoi(fields["pid"])
	_, startErr := time.Parse(time.RFC3339, fields["started"])
	id := fields["id"]
	_, idErr := strconv.ParseUint(id, 16, 64)
	if !host || pidErr != nil || startErr != nil || len(id) != 16 || idErr != nil {
		return "", false
	}
	return id, true
}

// Close ends the session, which releases every lock of it, after deleting the process's row.
func (h *pgHold) Close() error {
	h.mu.Lock()
	if h.shut {
		h.mu.Unlock()
		return nil
	}
	h.shut = true
	close(h.stop)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// A row left behind (the session already gone) is swept by the next hold: its lock is free.
	_, err := h.conn.Exec(ctx, "DELETE FROM processes WHERE id = $1", h.self.ID)
	if err == nil {
		// Released now, not when the server gets round to ending the session: whoever is told
		// this process has ended may take them at once.
		_, err = h.conn.Exec(ctx, "SELECT pg_advisory_unlock_all()")
	}
	err = errors.Join(err, h.conn.Close(ctx))
	if h.probe != nil {
		err = errors.Join(err, h.probe.Close(ctx))
	}
	h.mu.Unlock()
	h.done.Wait()
	if err != nil {
		return fmt.Errorf("release the PostgreSQL ledger's hold: %w", err)
	}
	return nil
}
