package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

// Decisions of the approvals table.
const (
	ApprovalRequested = "requested" // a run refused to pay the file without a second person
	ApprovalApproved  = "approved"
	ApprovalRejected  = "rejected"
)

// Approval is one row of the approvals table: a file's plan and what was said about it, by whom.
type Approval struct {
	ID              int64
	File            string // the file's path as given to the command
	FileSHA256      string
	PlanDigest      string
	Rows            int
	Total           decimal.Decimal
	NewPayouts      int
	NewTotal        decimal.Decimal
	Providers       int
	ProvidersDigest string
	Decision        string // ApprovalRequested, ApprovalApproved or ApprovalRejected
	Reason          string
	Actor           string // user@host of the account that ran the command
	Maker           string // the account that owns the file
	RunID           string // the refused run, for a request
	At              time.Time
}

const approvalColumns = `id, file, file_sha256, plan_digest, row_count, total, new_payouts, new_total, providers,
	providers_digest, decision, reason, actor, maker, run_id, decided_at`

// AddApproval appends a to the approvals table and returns its id. The table is append-only.
func (db *DB) AddApproval(ctx context.Context, a Approval) (int64, error) {
	var id int64
	err := db.writeSealed(ctx, "approvals", a.RunID, "approval: "+a.Decision, func(tx *sql.Tx) (string, []any, error) {
		res, err := tx.ExecContext(ctx, `INSERT INTO approvals (`+approvalColumns+`)
		VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			a.File, a.FileSHA256, a.PlanDigest, a.Rows, amountText(a.Total), a.NewPayouts, amountText(a.NewTotal),
			a.Providers, a.ProvidersDigest, a.Decision, a.Reason, a.Actor, a.Maker, a.RunID, fmtTime(a.At))
		if err == nil {
			id, err = res.LastInsertId()
		}
		return `WHERE id = ?`, []any{id}, err
	})
	if err != nil {
		return 0, fmt.Errorf("record approval of %s: %w", a.File, err)
	}
	return id, nil
}

// Approvals lists the approvals table's rows for a file's SHA-256, oldest first; every row when
// sha256 is empty.
func (db *DB) Approvals(ctx context.Context, sha256 string) ([]Approval, error) {
	where, args := ``, []any{}
	if sha256 != "" {
		where, args = `WHERE file_sha256 = ?`, []any{sha256}
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT `+approvalColumns+` FROM approvals `+where+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list approvals: %w", err)
	}
	defer rows.Close()
	var out []Approval
	for rows.Next() {
		a, err := scanApproval(rows)
		if err != nil {
			return nil, fmt.Errorf("list approvals: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list approvals: %w", err)
	}
	return out, nil
}

func scanApproval(s scanner) (Approval, error) {
	var a Approval
	var total, newTotal, at string
	err := s.Scan(&a.ID, &a.File, &a.FileSHA256, &a.PlanDigest, &a.Rows, &total, &a.NewPayouts, &newTotal,
		&a.Providers, &a.ProvidersDigest, &a.Decision, &a.Reason, &a.Actor, &a.Maker, &a.RunID, &at)
	if err != nil {
		return a, err
	}
	if a.Total, err = decimal.NewFromString(total); err != nil {
		return a, fmt.Errorf("approval %d: total %q: %w", a.ID, total, err)
	}
	if a.NewTotal, err = decimal.NewFromString(newTotal); err != nil {
		return a, fmt.Errorf("approval %d: new total %q: %w", a.ID, newTotal, err)
	}
	a.At, err = parseTime(at)
	return a, err
}

// LinkApproval records that run went ahead on the approval with id approvalID.
func (db *DB) LinkApproval(ctx context.Context, runID string, approvalID int64) error {
	err := db.writeSealed(ctx, "approved_runs", runID, "run approved", func(tx *sql.Tx) (string, []any, error) {
		_, err := tx.ExecContext(ctx, `INSERT INTO approved_runs (run_id, approval_id) VALUES (?, ?)`, runID, approvalID)
		return `WHERE run_id = ?`, []any{runID}, err
	})
	if err != nil {
		return fmt.Errorf("run %s: record its approval: %w", runID, err)
	}
	return nil
}

// RunApproval is the approval run went ahead on; false when it needed none.
func (db *DB) RunApproval(ctx context.Context, runID string) (Approval, bool, error) {
	row := db.sql.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals
		WHERE id = (SELECT approval_id FROM approved_runs WHERE run_id = ?)`, runID)
	a, err := scanApproval(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Approval{}, false, nil
	}
	if err != nil {
		return Approval{}, false, fmt.Errorf("run %s: read its approval: %w", runID, err)
	}
	return a, true, nil
}
