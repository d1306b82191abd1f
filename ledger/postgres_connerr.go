package ledger

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// connectAdvice says what to check when a connection to the ledger's server failed: the server
// names a wrong password, an unknown role or a missing database in codes of its own, and none of
// them is helped by asking whether the server runs.
func connectAdvice(cfg *pgx.ConnConfig, err error) string {
	user, database := "", ""
	if cfg != nil {
		user, database = cfg.User, cfg.Database
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "28P01": // invalid_password
			if cfg != nil && cfg.Password == "" {
				return "the server asks a password of user " + user + " and none was found: put it in ~/.pgpass (mode 0600), or in the file $PGPASSFILE names; never in the URL"
			}
			return "the server refused the password of user " + user + ": check its line in ~/.pgpass (or the file $PGPASSFILE names)"
		case "28000": // invalid_authorization_specification: an unknown role, or no pg_hba.conf line
			return "the server refused user " + user + " (" + pe.Message + "): check the URL's user, and that the server's pg_hba.conf lets it in from this host"
		case "3D000": // invalid_catalog_name
			return "the server has no database " + database + ": create it (createdb), then run `payout init` with that URL"
		}
		return "the server refused the connection (" + pe.Code + "): " + pe.Message
	}
	var ne net.Error
	switch {
	case strings.Contains(err.Error(), "password"): // "no password supplied", a SASL exchange cut short
		return "the server asks a password of user " + user + ": put it in ~/.pgpass (mode 0600), or in the file $PGPASSFILE names; never in the URL"
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return "the server did not answer in time: check the host and port, and any firewall between this host and the server"
	}
	return "is the server running, and the URL's host, port and database right?"
}

// ClosedConnection reports whether an error of closing the ledger says only that its
// connections were closed already: what a command meets as it closes the ledger after the
// database went away, which it has said already.
func ClosedConnection(err error) bool {
	if err == nil {
		return false
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			if e != nil && !ClosedConnection(e) {
				return false
			}
		}
		return true
	}
	return errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, sql.ErrConnDone) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, io.ErrUnexpectedEOF) || err.Error() == "conn closed" || err.Error() == "unexpected EOF"
}

// refusedAccess reports whether err is the server refusing the user, the password or the
// database: settings to correct, which trying again does not cure.
func refusedAccess(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "28P01", "28000", "3D000":
		return true
	}
	return false
}
