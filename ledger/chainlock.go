package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// writeDeadline bounds one write transaction of the ledger's writer, the wait for the chain's
// lock included: a ledger that stops answering fails the writes waiting on it instead of
// hanging the run. A dead host's transaction holds the lock at most idleInTransaction, or until
// the server notices its host gone (about 20 seconds).
const writeDeadline = 2 * time.Minute

// chainLockPatience is how long a writer waits for the chain's lock before it says in the log
// whose session holds it, and waits again.
const chainLockPatience = 5 * time.Second

// holdChain begins a write transaction (begin) and, where the engine takes the chain's lock in
// it (PostgreSQL), takes the lock, waiting for it while ctx lasts: every chainLockPatience the
// transaction is rolled back and begun again, and the log says what it waits for (the holder's
// application name names its host and pid). exec runs a statement in the transaction, rollback
// ends it.
func (db *DB) holdChain(ctx context.Context, begin func() error, exec func(string) error, rollback func()) error {
	waited := time.Duration(0)
	for {
		if err := begin(); err != nil || db.eng.lockChain == "" {
			return err
		}
		err := exec(fmt.Sprintf("SET LOCAL lock_timeout = %d", chainLockPatience.Milliseconds()))
		if err == nil {
			if err = exec(db.eng.lockChain); err == nil {
				return nil
			}
		}
		rollback()
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "55P03" { // lock_not_available
			return err
		}
		waited += chainLockPatience
		holder := db.chainHolder(ctx)
		if ctx.Err() != nil {
			return fmt.Errorf("the ledger's write lock, held by %s, was not free within %s: %w", holder, waited, ctx.Err())
		}
		db.log.Warn("waiting for the ledger's write lock", "held_by", holder, "waited", waited.String())
	}
}

// chainHolder names, for the log, the session that holds the chain's lock: its application
// name (a payout process's names its host and pid), client address, state and for how long.
func (db *DB) chainHolder(ctx context.Context) string {
	key := uint64(chainLockKey)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	var who string
	err := db.sql.QueryRowContext(ctx, `SELECT format('session %s (%s) from %s, %s for %s s', a.pid,
			COALESCE(NULLIF(a.application_name, ''), 'no application name'), COALESCE(host(a.client_addr), 'a local socket'),
			COALESCE(a.state, 'state not visible to this role'), COALESCE(round(EXTRACT(EPOCH FROM now() - a.state_change))::text, '?'))
		FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.classid = $1 AND l.objid = $2
			AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		LIMIT 1`, uint32(key>>32), uint32(key)).Scan(&who)
	if err != nil {
		return "a session that could not be named (" + err.Error() + ")"
	}
	return who
}
