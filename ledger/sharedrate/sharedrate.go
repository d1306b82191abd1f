// Package sharedrate paces the requests of every process, on every host, that pays for one
// merchant from one PostgreSQL ledger, on a row of the ledger's database (its rate_limits table).
package sharedrate

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
	"golang.org/x/time/rate"

	"github.com/payout/payout/ledger"
)

// Limiter paces one process's requests for a merchant together with those of every other
// process, on any host, that pays for the merchant from the same ledger: the service's rate
// limit is the merchant's, and two processes at 50 a second each would otherwise send 100. It is
// a batch/pool.Limiter and a pool.Pauser.
//
// Each Wait is one statement on the merchant's row of rate_limits: GCRA (the generic cell rate
// algorithm) at the limit with the burst's tolerance, computed on the database server's clock,
// so that skew between the hosts' clocks does not matter; the process then sleeps for the wait
// the server computed. A database that does not answer fails the Wait: no request goes
// unpaced, and the run stops, to be resumed by a rerun.
type Limiter struct {
	db       *sql.DB
	merchant string
	limit    rate.Limit
	// interval is 1/limit and tolerance (burst-1)/limit, in whole microseconds (the server's
	// resolution), rounded up: never faster than the limit.
	interval, tolerance int64
	timeout             time.Duration // of one statement: a database that does not answer
}

// statementTimeout bounds each statement of a Limiter, its connection included: a Wait on a
// database that does not answer fails within it rather than hanging the run.
const statementTimeout = 10 * time.Second

// keyPrefix separates the merchant key from any other SHA-256 of the same URL and token (a
// digest some other tool or log might compute of the token): the stored key matches nothing but
// itself. Changing it gives every merchant a new row.
const keyPrefix = "payout rate limit v1\x00"

// Key is the merchant's row in rate_limits: the hex SHA-256 of a fixed prefix, the service's
// base URL (scheme and host in lower case, no trailing slash) and the merchant token. Two hosts
// configured for the same merchant on the same service share the row; the sandbox and
// production, or two merchants, do not. The ledger's readers see only the digest, from which the
// token cannot be recovered.
func Key(baseURL, token string) string {
	h := sha256.New()
	h.Write([]byte(keyPrefix))
	h.Write([]byte(normalBaseURL(baseURL)))
	h.Write([]byte{0}) // neither a URL nor a token holds a NUL: the pair is read back one way only
	h.Write([]byte(token))
	return hex.EncodeToString(h.Sum(nil))
}

// normalBaseURL is baseURL as two hosts configured for one service write it alike.
func normalBaseURL(baseURL string) string {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil {
		return strings.TrimRight(strings.TrimSpace(baseURL), "/")
	}
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u.String()
}

// OpenDB is a handle on the ledger's database at url for a Limiter, keeping up to conns idle
// connections (one per worker, each of which may wait at once), with the settings of every
// session on the ledger (ledger.SessionConfig). Its commits are not waited for on disk
// (synchronous_commit off): every Wait writes the merchant's one row, which stays locked until
// the commit is flushed, so durable commits would pace every process together at one request per
// disk flush, whatever the limit. What a server crash can lose of the row is
// its last moments of grants (and a pause): the first requests after the restart may go that
// much early, and a 429 still holds them back. Nothing of the money is in this table.
func OpenDB(url string, conns int) (*sql.DB, error) {
	cfg, err := ledger.SessionConfig(url, "rate limit")
	if err != nil {
		return nil, fmt.Errorf("shared rate limit: %w", err)
	}
	cfg.RuntimeParams["synchronous_commit"] = "off"
	db := stdlib.OpenDB(*cfg)
	db.SetMaxIdleConns(conns)
	return db, nil
}

// New is the limiter of merchant (Key) on db, a database/sql handle of the "pgx" driver on a
// ledger whose schema has rate_limits (OpenDB's): limit requests a second (rate.Inf: none,
// though a 429's pause still holds), up to burst at once after a pause.
func New(db *sql.DB, merchant string, limit rate.Limit, burst int) (*Limiter, error) {
	if merchant == "" {
		return nil, errors.New("shared rate limit: no merchant key")
	}
	if !(limit > 0) {
		return nil, fmt.Errorf("shared rate limit: a limit of %v requests a second lets nothing go; want above 0, or rate.Inf", float64(limit))
	}
	l := &Limiter{db: db, merchant: merchant, limit: limit, timeout: statementTimeout}
	if limit != rate.Inf {
		l.interval = int64(math.Ceil(1e6 / float64(limit)))
		l.tolerance = int64(max(burst-1, 0)) * l.interval
	}
	return l, nil
}

// Limit is the most requests a second, all processes together.
func (l *Limiter) Limit() rate.Limit { return l.limit }

// Wait blocks until the merchant's next request may go, or returns ctx's error at once when
// ctx ends, or the database's error.
func (l *Limiter) Wait(ctx context.Context) error {
	_, _, err := l.wait(ctx)
	return err
}

// waitSQL takes a request's turn: the grant is the latest of now, the theoretical arrival
// time less the burst's tolerance, and the pause; the arrival time moves one interval past the
// later of itself and the grant. Everything is the server's time, read once the row is locked
// (clock_timestamp() in the update, not the statement's start): a turn that waited for another
// process's turn on the row is told the wait that is left, not the one it would have had when it
// asked, which would send it late and bunch it with the turns after it. A new row's grant and
// arrival time are of one reading; an update reads the grant's clock before the arrival time's,
// so turns are never closer than the limit. The now it returns is read last, so the wait is at
// most microseconds short. $2 is the interval, $3 the
// tolerance, in microseconds.
const waitSQL = `INSERT INTO rate_limits AS r (merchant, tat, granted)
SELECT $1, c.now + $2::float8 * interval '1 microsecond', c.now FROM (SELECT clock_timestamp() AS now) AS c
ON CONFLICT (merchant) DO UPDATE SET
	granted = greatest(clock_timestamp(), r.tat - $3::float8 * interval '1 microsecond', r.pause_until),
	tat = greatest(r.tat, clock_timestamp(), r.pause_until) + $2::float8 * interval '1 microsecond'
RETURNING granted, clock_timestamp()`

// WaitDue is Wait, telling also when the turn was due on this host's clock, as early as it may
// have been: the grant's wait counted from when the statement was sent (the server computed it
// later, and its answer came later still; the wait itself is counted from the answer, never
// early). A turn had long after that came late (a slow answer, a process scheduled late), and
// batch/pool gives it up rather than bunch its request with the next ones.
func (l *Limiter) WaitDue(ctx context.Context) (time.Time, error) {
	_, due, err := l.wait(ctx)
	return due, err
}

func (l *Limiter) wait(ctx context.Context) (granted, due time.Time, err error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, time.Time{}, err
	}
	sent := time.Now()
	var now time.Time
	err = l.statement(ctx, func(sctx context.Context) error {
		return l.db.QueryRowContext(sctx, waitSQL, l.merchant, l.interval, l.tolerance).Scan(&granted, &now)
	})
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	wait := max(granted.Sub(now), 0)
	due = sent.Add(wait)
	if wait == 0 {
		return granted, due, nil
	}
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
		return time.Time{}, time.Time{}, fmt.Errorf("shared rate limit: the next request may go in %s, after the context's deadline", wait)
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return granted, due, nil
	case <-ctx.Done():
		return time.Time{}, time.Time{}, ctx.Err()
	}
}

// pauseSQL holds back every request of the merchant until at least $2 microseconds from
// the server's now; a later pause already there stays.
const pauseSQL = `INSERT INTO rate_limits AS r (merchant, pause_until)
VALUES ($1, statement_timestamp() + $2::float8 * interval '1 microsecond')
ON CONFLICT (merchant) DO UPDATE SET pause_until = greatest(r.pause_until, EXCLUDED.pause_until)`

// Pause holds back every Wait of every process sharing the merchant's row until at least d
// from now (a 429's Retry-After), on the server's clock.
func (l *Limiter) Pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	return l.statement(ctx, func(sctx context.Context) error {
		_, err := l.db.ExecContext(sctx, pauseSQL, l.merchant, d.Microseconds()+1)
		return err
	})
}

// statement runs one statement of the limiter within its timeout. An error is ctx's when ctx
// ended, and otherwise says that nothing goes unpaced.
func (l *Limiter) statement(ctx context.Context, run func(context.Context) error) error {
	sctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	err := run(sctx)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return fmt.Errorf("the rate limit shared in the ledger's database: %w (no request goes unpaced: the run stops; run again once the database answers)", err)
}
