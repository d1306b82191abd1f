package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/payout/payout/api"
)

// explainUnreachable says, of an error that holds a failed connection to the service, which
// setting named the address and what to check. Any other error is returned as it is.
func explainUnreachable(err error, baseURL string) error {
	var dns *net.DNSError
	var op *net.OpError
	var ledgerConn *pgconn.ConnectError
	where := envBaseURL + "=" + baseURL
	switch {
	case errors.As(err, &ledgerConn):
		return err // the ledger's server, which its own message names, not the service
	case errors.As(err, &dns):
		return fmt.Errorf("%w: the host of %s is not known: check the address for a typing mistake, and this machine's DNS", err, where)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%w: nothing answers at %s: check the host and port, and that the service (or `payout sandbox`) is running there", err, where)
	case errors.As(err, &op) && op.Op == "dial":
		return fmt.Errorf("%w: cannot connect to %s: check the address, and any firewall or proxy between this machine and the service", err, where)
	}
	return err
}

// apiSettings are the environment variables behind api.Config's fields.
var apiSettings = map[string]string{"BaseURL": envBaseURL, "AuthToken": envAuthToken}

// apiConfigError names the environment variable behind an api.Config field that the client
// refused, with what a valid value looks like; other errors are returned as they are.
func apiConfigError(err error) error {
	var ce *api.ConfigError
	if !errors.As(err, &ce) {
		return err
	}
	field, ok := apiSettings[ce.Field]
	if !ok {
		return err
	}
	reason := ce.Err
	if ce.Field == "BaseURL" && errors.Is(reason, api.ErrInvalidURL) {
		reason = fmt.Errorf("%w (want the service's address, such as https://payout.example.com)", reason)
	}
	return &ConfigError{Field: field, Value: ce.Value, Err: reason}
}

// fileReason is why a file could not be read, in a person's words, with what to check; the
// file's content is never part of it.
func fileReason(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("cannot read the file: there is no such file (check the path; a relative one is read from the working directory)")
	case errors.Is(err, fs.ErrPermission):
		return errors.New("cannot read the file: permission denied (it must be readable by the account payout runs as)")
	case errors.Is(err, syscall.EISDIR):
		return errors.New("cannot read the file: it is a folder (name the file inside it)")
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("cannot read the file: %w", pe.Err)
	}
	return fmt.Errorf("cannot read the file: %w", err)
}
