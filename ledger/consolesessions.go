package ledger

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"time"
)

// ConsoleSession is a web console's session as every console host on the ledger reads it. The
// ledger keeps no token: a row is found by the SHA-256 of the cookie's token, so that whoever
// reads the table (a backup, an auditor's role) cannot sign in with what is there.
type ConsoleSession struct {
	TokenSHA256 string // hex SHA-256 of the session cookie's token
	Principal   string // who signed in; "" for a visitor in the middle of a passkey ceremony
	Credential  []byte // the passkey's credential id
	UserHandle  []byte // the user handle the passkey was registered with
	Expires     time.Time
	// Ceremony is the passkey ceremony under way, as the console wrote it (opaque here), until
	// CeremonyExpires; "" when none is open.
	Ceremony        string
	CeremonyExpires time.Time
}

// ErrConsoleBusy refuses a new visitor's ceremony while as many as the console allows are under
// way: whoever can reach the sign-in page cannot fill the table.
var ErrConsoleBusy = errors.New("too many sign-ins under way")

const consoleSessionColumns = `token_sha256, principal, credential, user_handle, expires_at, ceremony, ceremony_expires_at`

func scanConsoleSession(s scanner) (ConsoleSession, error) {
	var c ConsoleSession
	var cred, handle, exp, cexp string
	if err := s.Scan(&c.TokenSHA256, &c.Principal, &cred, &handle, &exp, &c.Ceremony, &cexp); err != nil {
		return c, err
	}
	var err error
	if c.Credential, err = base64.RawURLEncoding.DecodeString(cred); err != nil {
		return c, fmt.Errorf("console session: credential: %w", err)
	}
	if c.UserHandle, err = base64.RawURLEncoding.DecodeString(handle); err != nil {
		return c, fmt.Errorf("console session: user handle: %w", err)
	}
	if c.Expires, err = parseTime(exp); err != nil {
		return c, err
	}
	c.CeremonyExpires, err = parseTime(cexp)
	return c, err
}

// ConsoleSession returns the session whose token has the SHA-256 tokenSHA256 and has not expired
// at now; ok is false for none.
func (db *DB) ConsoleSession(ctx context.Context, tokenSHA256 string, now time.Time) (s ConsoleSession, ok bool, err error) {
	row := db.sql.QueryRowContext(ctx, `SELECT `+consoleSessionColumns+` FROM console_sessions WHERE token_sha256 = $1 AND expires_at > $2`,
		tokenSHA256, fmtTime(now))
	s, err = scanConsoleSession(row)
	if errors.Is(err, sql.ErrNoRows) {
		return ConsoleSession{}, false, nil
	}
	if err != nil {
		return ConsoleSession{}, false, fmt.Errorf("console session: %w", err)
	}
	return s, true, nil
}

// BeginConsoleCeremony opens a passkey ceremony on the session with token SHA-256
// s.TokenSHA256: on a session signed in it replaces the ceremony alone; otherwise it makes the
// visitor's row, which lasts as long as the ceremony (s.Expires), unless maxVisitors other
// visitors' are open (ErrConsoleBusy). Expired sessions are swept first, so that visitors who never finish
// leave nothing behind.
func (db *DB) BeginConsoleCeremony(ctx context.Context, s ConsoleSession, now time.Time, maxVisitors int) error {
	if _, err := db.sql.ExecContext(ctx, `DELETE FROM console_sessions WHERE expires_at <= $1`, fmtTime(now)); err != nil {
		return fmt.Errorf("console session: sweep: %w", err)
	}
	var visitors int
	if err := db.sql.QueryRowContext(ctx, `SELECT count(*) FROM console_sessions WHERE principal = '' AND token_sha256 <> $1`,
		s.TokenSHA256).Scan(&visitors); err != nil {
		return fmt.Errorf("console session: count visitors: %w", err)
	}
	if visitors >= maxVisitors {
		return ErrConsoleBusy
	}
	_, err := db.sql.ExecContext(ctx, `INSERT INTO console_sessions (`+consoleSessionColumns+`) VALUES ($1, '', '', '', $2, $3, $4)
		ON CONFLICT (token_sha256) DO UPDATE SET ceremony = excluded.ceremony, ceremony_expires_at = excluded.ceremony_expires_at`,
		s.TokenSHA256, fmtTime(s.Expires), s.Ceremony, fmtTime(s.CeremonyExpires))
	if err != nil {
		return fmt.Errorf("console session: begin ceremony: %w", err)
	}
	return nil
}

// TakeConsoleCeremony returns the ceremony open on the session and closes it: of two hosts that
// get the browser's answer at once, one takes it (the update clears only the ceremony read). It
// returns "" when none is open or it expired.
func (db *DB) TakeConsoleCeremony(ctx context.Context, tokenSHA256 string, now time.Time) (string, error) {
	var ceremony string
	err := db.sql.QueryRowContext(ctx, `SELECT ceremony FROM console_sessions
		WHERE token_sha256 = $1 AND ceremony <> '' AND ceremony_expires_at > $2 AND expires_at > $2`, tokenSHA256, fmtTime(now)).Scan(&ceremony)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("console session: take ceremony: %w", err)
	}
	res, err := db.sql.ExecContext(ctx, `UPDATE console_sessions SET ceremony = '', ceremony_expires_at = ''
		WHERE token_sha256 = $1 AND ceremony = $2`, tokenSHA256, ceremony)
	if err != nil {
		return "", fmt.Errorf("console session: take ceremony: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return "", err // another host took it first
	}
	return ceremony, nil
}

// SignInConsoleSession ends the session with token SHA-256 oldSHA256 and starts s, signed in, in
// one transaction: a token known before the sign-in signs nobody in.
func (db *DB) SignInConsoleSession(ctx context.Context, oldSHA256 string, s ConsoleSession) error {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("console session: sign in: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM console_sessions WHERE token_sha256 = $1`, oldSHA256); err != nil {
		return fmt.Errorf("console session: sign in: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO console_sessions (`+consoleSessionColumns+`) VALUES ($1, $2, $3, $4, $5, '', '')`,
		s.TokenSHA256, s.Principal, base64.RawURLEncoding.EncodeToString(s.Credential), base64.RawURLEncoding.EncodeToString(s.UserHandle),
		fmtTime(s.Expires)); err != nil {
		return fmt.Errorf("console session: sign in: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("console session: sign in: %w", err)
	}
	return nil
}

// EndConsoleSession ends the session with token SHA-256 tokenSHA256 on every host.
func (db *DB) EndConsoleSession(ctx context.Context, tokenSHA256 string) error {
	if _, err := db.sql.ExecContext(ctx, `DELETE FROM console_sessions WHERE token_sha256 = $1`, tokenSHA256); err != nil {
		return fmt.Errorf("console session: end: %w", err)
	}
	return nil
}
