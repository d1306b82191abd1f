// Package consolestore keeps the web console's sessions and passkey ceremonies in the ledger's
// database, so that every console host on one ledger signs the same people in.
package consolestore

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/payout/payout/ledger/internal/dbtime"
)

// Session is a web console's session as every console host on the ledger reads it. The store
// keeps no token: a row is found by the SHA-256 of the cookie's token, so that whoever reads the
// table (a backup, an auditor's role) cannot sign in with what is there.
type Session struct {
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

// ErrBusy refuses a new visitor's ceremony while as many as the console allows are under way:
// whoever can reach the sign-in page cannot fill the table.
var ErrBusy = errors.New("too many sign-ins under way")

// Store is the console_sessions table of one ledger's database, on SQLite or PostgreSQL.
type Store struct {
	db *sql.DB
}

// New is the store on db, a ledger's database (ledger.DB.ConsoleSessions).
func New(db *sql.DB) *Store { return &Store{db: db} }

// fmtTime and parseTime write and read the table's times as the ledger's other tables hold
// them: as text that compares as time does, in SQL on either engine.
var fmtTime, parseTime = dbtime.Format, dbtime.Parse

const columns = `token_sha256, principal, credential, user_handle, expires_at, ceremony, ceremony_expires_at`

func scanSession(row *sql.Row) (Session, error) {
	var c Session
	var cred, handle, exp, cexp string
	if err := row.Scan(&c.TokenSHA256, &c.Principal, &cred, &handle, &exp, &c.Ceremony, &cexp); err != nil {
		return c, err
	}
	var err error
	if c.Credential, err = base64.RawURLEncoding.DecodeString(cred); err != nil {
		return c, fmt.Errorf("credential: %w", err)
	}
	if c.UserHandle, err = base64.RawURLEncoding.DecodeString(handle); err != nil {
		return c, fmt.Errorf("user handle: %w", err)
	}
	if c.Expires, err = parseTime(exp); err != nil {
		return c, err
	}
	c.CeremonyExpires, err = parseTime(cexp)
	return c, err
}

// Session returns the session whose token has the SHA-256 tokenSHA256 and has not expired at
// now; ok is false for none.
func (s *Store) Session(ctx context.Context, tokenSHA256 string, now time.Time) (sess Session, ok bool, err error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+columns+` FROM console_sessions WHERE token_sha256 = $1 AND expires_at > $2`,
		tokenSHA256, fmtTime(now))
	sess, err = scanSession(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, false, nil
	}
	if err != nil {
		return Session{}, false, fmt.Errorf("console session: %w", err)
	}
	return sess, true, nil
}

// BeginCeremony opens a passkey ceremony on the session with token SHA-256 sess.TokenSHA256: on
// a session signed in it replaces the ceremony alone; otherwise it makes the visitor's row,
// which lasts as long as the ceremony (sess.Expires), unless maxVisitors other visitors' are
// open (ErrBusy). Expired sessions are swept first, so that visitors who never finish leave
// nothing behind.
func (s *Store) BeginCeremony(ctx context.Context, sess Session, now time.Time, maxVisitors int) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM console_sessions WHERE expires_at <= $1`, fmtTime(now)); err != nil {
		return fmt.Errorf("console session: sweep: %w", err)
	}
	var visitors int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM console_sessions WHERE principal = '' AND token_sha256 <> $1`,
		sess.TokenSHA256).Scan(&visitors); err != nil {
		return fmt.Errorf("console session: count visitors: %w", err)
	}
	if visitors >= maxVisitors {
		return ErrBusy
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO console_sessions (`+columns+`) VALUES ($1, '', '', '', $2, $3, $4)
		ON CONFLICT (token_sha256) DO UPDATE SET ceremony = excluded.ceremony, ceremony_expires_at = excluded.ceremony_expires_at`,
		sess.TokenSHA256, fmtTime(sess.Expires), sess.Ceremony, fmtTime(sess.CeremonyExpires))
	if err != nil {
		return fmt.Errorf("console session: begin ceremony: %w", err)
	}
	return nil
}

// TakeCeremony returns the ceremony open on the session and closes it: of two hosts that get the
// browser's answer at once, one takes it (the update clears only the ceremony read). It returns
// "" when none is open or it expired.
func (s *Store) TakeCeremony(ctx context.Context, tokenSHA256 string, now time.Time) (string, error) {
	var ceremony string
	err := s.db.QueryRowContext(ctx, `SELECT ceremony FROM console_sessions
		WHERE token_sha256 = $1 AND ceremony <> '' AND ceremony_expires_at > $2 AND expires_at > $2`, tokenSHA256, fmtTime(now)).Scan(&ceremony)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("console session: take ceremony: %w", err)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE console_sessions SET ceremony = '', ceremony_expires_at = ''
		WHERE token_sha256 = $1 AND ceremony = $2`, tokenSHA256, ceremony)
	if err != nil {
		return "", fmt.Errorf("console session: take ceremony: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return "", err // another host took it first
	}
	return ceremony, nil
}

// SignIn ends the session with token SHA-256 oldSHA256 and starts sess, signed in, in one
// transaction: a token known before the sign-in signs nobody in.
func (s *Store) SignIn(ctx context.Context, oldSHA256 string, sess Session) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("console session: sign in: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM console_sessions WHERE token_sha256 = $1`, oldSHA256); err != nil {
		return fmt.Errorf("console session: sign in: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO console_sessions (`+columns+`) VALUES ($1, $2, $3, $4, $5, '', '')`,
		sess.TokenSHA256, sess.Principal, base64.RawURLEncoding.EncodeToString(sess.Credential),
		base64.RawURLEncoding.EncodeToString(sess.UserHandle), fmtTime(sess.Expires)); err != nil {
		return fmt.Errorf("console session: sign in: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("console session: sign in: %w", err)
	}
	return nil
}

// End ends the session with token SHA-256 tokenSHA256 on every host.
func (s *Store) End(ctx context.Context, tokenSHA256 string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM console_sessions WHERE token_sha256 = $1`, tokenSHA256); err != nil {
		return fmt.Errorf("console session: end: %w", err)
	}
	return nil
}
