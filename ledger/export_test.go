package ledger

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// SQLOf exposes the connection pool to the tests, which check pragmas on pooled connections
// and that the database itself refuses to rewrite the audit trail.
func SQLOf(db *DB) *sql.DB { return db.sql }

// RetryOf is the reference the payout ref was recorded as a retry of (its retry_of column);
// empty when it is none.
func (db *DB) RetryOf(ctx context.Context, ref string) (string, error) {
	var old string
	err := db.sql.QueryRowContext(ctx, `SELECT retry_of FROM payouts WHERE ref = $1`, ref).Scan(&old)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("payout %s: %w", ref, ErrNotFound)
	}
	return old, err
}

// SchemaVersion is the number of the last migration the open ledger's tables are.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) { return db.schemaVersion(ctx) }

// RunRows is the rows of RunLines without their payouts, for the tests of Record.
func (db *DB) RunRows(ctx context.Context, runID string) ([]RunRow, error) {
	var rows []RunRow
	err := db.RunLines(ctx, runID, LineRead{}, func(l ReportLine) error {
		rows = append(rows, l.Row)
		return nil
	})
	return rows, err
}

// Lock takes the file lock on ledgerPath, as Take does for a SQLite ledger, for the tests of
// the lock itself.
func Lock(ledgerPath string) (*fileLock, error) { return lockFile(ledgerPath) }

// Migrations is how many migrations this build knows: the schema version of a ledger it made.
func Migrations() int { return LatestMigration() }

// SchemaDigest names the schema this build makes: a digest of its migrations.
func SchemaDigest() string {
	names, _ := fs.Glob(migrations, "migrations/*.sql")
	h := sha256.New()
	for _, name := range names {
		body, _ := migrations.ReadFile(name)
		h.Write(body)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// QuickCheck runs PRAGMA quick_check alone, as VerifyChain runs it first: every page of every
// table and index is read and its structure checked (not that indexes match their tables,
// which integrity_check adds at many times the cost). It reads the whole file, so its cost
// grows with the ledger: opening for paying does not run it. A damaged ledger is refused with
// an *OpenError (ErrDamaged) saying what was found.
func (db *DB) QuickCheck(ctx context.Context) error {
	findings, err := db.quickCheckFindings(ctx)
	if err != nil {
		// Damage bad enough to stop the check itself is a finding too.
		if classified := classify(db.path, err); errors.Is(classified, ErrDamaged) {
			return refuse(db.path, ErrDamaged, "quick_check stopped: "+err.Error())
		}
		return err
	}
	if len(findings) == 1 && findings[0] == "ok" {
		return nil
	}
	return refuse(db.path, ErrDamaged, "quick_check: "+strings.Join(findings, "; "))
}

func (db *DB) quickCheckFindings(ctx context.Context) ([]string, error) {
	rows, err := db.sql.QueryContext(ctx, "PRAGMA quick_check(5)")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var findings []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		findings = append(findings, s)
	}
	return findings, rows.Err()
}

// SessionSetting is a setting of a PostgreSQL hold's own session, as its server sees it.
func SessionSetting(ctx context.Context, h Hold, name string) (string, error) {
	ph := h.(*pgHold)
	ph.mu.Lock()
	defer ph.mu.Unlock()
	var v string
	err := ph.conn.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v)
	return v, err
}
