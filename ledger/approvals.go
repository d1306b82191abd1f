package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

// Decisions of the approvals table. The table holds what older versions recorded, for the
// evidence of their runs; it takes no more rows (approvals are signatures now), and no run pays on
// the strength of a row in it.
const (
	ApprovalRequested = "requested" // a run refused to pay the file without an approval
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
	Maker           string // the account that owned the file
	RunID           string // the refused run, for a request
	At              time.Time
}

const approvalColumns = `id, file, file_sha256, plan_digest, row_count, total, new_payouts, new_total, providers,
	providers_digest, decision, reason, actor, maker, run_id, decided_at`

// Approvals lists the approvals table's rows for a file's SHA-256, oldest first; every row when
// sha256 is empty.
func (db *DB) Approvals(ctx context.Context, sha256 string) ([]Approval, error) {
	where, args := ``, []any{}
	if sha256 != "" {
		where, args = `WHERE file_sha256 = $1`, []any{sha256}
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
