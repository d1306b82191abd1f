package ledger

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// The keepalives of a hold's session, on both ends. A host that dies without closing its
// session (power cut, network gone) is noticed by the server after keepIdle of silence and
// keepCount unanswered probes keepInterval apart: about 5 + 3×5 = 20 seconds. The server then
// ends the session, which releases its locks: the process is gone for everyone else. The process
// notices a server gone as fast, and its hold says so (Lost).
const (
	keepIdle     = 5 * time.Second
	keepInterval = 5 * time.Second
	keepCount    = 3
	// checkInterval is client_connection_check_interval (PostgreSQL 14+): how often a running
	// query's server looks whether its client is still there.
	checkInterval = 2 * time.Second
)

// connectTimeout bounds a connection's start, its authentication included, where the URL sets
// no connect_timeout: a server that accepts and never answers fails the command instead of
// hanging it.
const connectTimeout = 10 * time.Second

// idleInTransaction is the server's idle_in_transaction_session_timeout for every session of
// the ledger: a host that stops in the middle of a write transaction (paused, or its network
// gone) holds the chain's lock, which every other writer waits for, only this long. The
// ledger's own transactions send their statements back to back.
const idleInTransaction = 15 * time.Second

// SessionConfig is the connection configuration of every session a process opens on a
// PostgreSQL ledger (its hold's, the ledger's pool, package sharedrate's): the URL's, with the
// ledger's schema pinned, a connect timeout, short TCP keepalives on the client's socket
// (libpq's keepalives_idle, keepalives_interval and keepalives_count in the URL are honoured:
// pgx itself does not take them) and on the server's (tcp_keepalives_*, sent as the session's
// settings), tcp_user_timeout (the keepalives probe only an idle connection; this bounds how
// long data sent may stay unacknowledged, on both ends) and idleInTransaction. A dead host is so
// noticed by the server within about 20 seconds, and a dead server by the host. purpose names
// the sessions in pg_stat_activity, with the host and pid, so that an operator (and the log of a
// writer that waits for the chain's lock) can tell whose session holds what. A package that
// opens sessions of its own on the ledger's database starts from it, so that they have the
// same guards as the ledger's.
func SessionConfig(ledgerURL, purpose string) (*pgx.ConnConfig, error) {
	if _, err := checkTransport(ledgerURL); err != nil {
		return nil, err // the ledger's Open warns of a plaintext connection it makes
	}
	cfg, err := pgx.ParseConfig(ledgerURL)
	if err != nil {
		// pgx's message quotes the URL, which may hold a password.
		return nil, errors.New("the ledger URL is not a PostgreSQL connection URL (postgres://user@host:port/database?...): check $PAYOUT_LEDGER or --ledger")
	}
	pinSchema(cfg.RuntimeParams)
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = connectTimeout
	}
	ka := net.KeepAliveConfig{Enable: true, Idle: keepIdle, Interval: keepInterval, Count: keepCount}
	seconds := func(name string, into *time.Duration) {
		if n, err := strconv.Atoi(cfg.RuntimeParams[name]); err == nil && n > 0 {
			*into = time.Duration(n) * time.Second
		}
	}
	seconds("keepalives_idle", &ka.Idle)
	seconds("keepalives_interval", &ka.Interval)
	if n, err := strconv.Atoi(cfg.RuntimeParams["keepalives_count"]); err == nil && n > 0 {
		ka.Count = n
	}
	// Not settings of the server, which would refuse them at the start of the session.
	for _, name := range []string{"keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count"} {
		delete(cfg.RuntimeParams, name)
	}
	userTimeout := ka.Idle + time.Duration(ka.Count)*ka.Interval
	dialer := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAliveConfig: ka, Control: tcpUserTimeout(userTimeout)}
	cfg.DialFunc = dialer.DialContext
	cfg.RuntimeParams["tcp_keepalives_idle"] = strconv.Itoa(int(ka.Idle.Seconds()))
	cfg.RuntimeParams["tcp_keepalives_interval"] = strconv.Itoa(int(ka.Interval.Seconds()))
	cfg.RuntimeParams["tcp_keepalives_count"] = strconv.Itoa(ka.Count)
	cfg.RuntimeParams["tcp_user_timeout"] = strconv.FormatInt(userTimeout.Milliseconds(), 10)
	if cfg.RuntimeParams["idle_in_transaction_session_timeout"] == "" {
		cfg.RuntimeParams["idle_in_transaction_session_timeout"] = strconv.FormatInt(idleInTransaction.Milliseconds(), 10)
	}
	if cfg.RuntimeParams["application_name"] == "" {
		host, _ := os.Hostname()
		// At most 63 bytes are kept by the server.
		name := fmt.Sprintf("payout %s pid=%d host=%s", purpose, os.Getpid(), host)
		cfg.RuntimeParams["application_name"] = name[:min(len(name), 63)]
	}
	return cfg, nil
}

// redactedURL names a ledger's server and database for people, without user or password.
func redactedURL(cfg *pgx.ConnConfig) string {
	u := url.URL{Scheme: "postgres", Host: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))), Path: "/" + cfg.Database}
	return u.String()
}
