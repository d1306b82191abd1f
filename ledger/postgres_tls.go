package ledger

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrPlaintext refuses a ledger URL whose connection to a host other than this one could go
// unencrypted without the URL saying so.
var ErrPlaintext = errors.New("the connection to the ledger's database could go unencrypted")

// checkTransport decides whether the connection url describes may be made. A connection to this
// host (a loopback address, localhost, or a Unix socket) may be plaintext. One to another host
// carries payouts, account numbers and the role's password: it is refused when it could go in
// plaintext without the URL (or PGSSLMODE) saying sslmode=disable. libpq's and pgx's default,
// sslmode=prefer, tries TLS and silently falls back to plaintext, as allow does; a refusal is
// what someone who wrote a URL without thinking of TLS would want to hear of. sslmode=disable,
// written out, is a choice (a network the operator trusts, a tunnel): it is used, and warning
// says so on each open. The environment's PG* variables count as pgx reads them.
func checkTransport(ledgerURL string) (warning string, err error) {
	cfg, err := pgconn.ParseConfig(ledgerURL)
	if err != nil {
		// pgx's message quotes the URL, which may hold a password.
		return "", errors.New("the ledger URL is not a PostgreSQL connection URL (postgres://user@host:port/database?...): check $PAYOUT_LEDGER")
	}
	type target struct {
		host  string
		plain bool
	}
	targets := []target{{cfg.Host, cfg.TLSConfig == nil}}
	for _, f := range cfg.Fallbacks {
		targets = append(targets, target{f.Host, f.TLSConfig == nil})
	}
	for _, t := range targets {
		if !t.plain || isLocalHost(t.host) {
			continue
		}
		if explicitlyPlain(ledgerURL) {
			return fmt.Sprintf("the ledger's connection to %s is not encrypted (sslmode=disable): payouts, account numbers and the role's password cross the network in clear; use sslmode=verify-full unless the network is trusted", t.host), nil
		}
		return "", refuse(ledgerURL, ErrPlaintext, fmt.Sprintf("%s is another host, and without sslmode=require, verify-ca or verify-full in the URL "+
			"the connection falls back to plaintext when TLS fails (sslmode=prefer, the default). Add sslmode=verify-full (and sslrootcert= the server's CA) to the URL; "+
			"write sslmode=disable only for a network you trust", t.host))
	}
	return "", nil
}

// explicitlyPlain says whether the URL, or PGSSLMODE when the URL names no sslmode, says
// sslmode=disable.
func explicitlyPlain(ledgerURL string) bool {
	u, err := url.Parse(ledgerURL)
	if err != nil {
		return false
	}
	if q := u.Query(); q.Has("sslmode") {
		return q.Get("sslmode") == "disable"
	}
	return os.Getenv("PGSSLMODE") == "disable"
}

// isLocalHost says whether host is this machine: a Unix socket's folder, localhost, or a
// loopback address.
func isLocalHost(host string) bool {
	if host == "" || host[0] == '/' || host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
