package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// ReportLine is one input line of a run as its report shows it: the row as the run recorded it
// and, when the row is valid and its payout is in the ledger, that payout as it stands now.
type ReportLine struct {
	Row RunRow
	// Payout is nil for a rejected row, and for a valid row whose payout was never recorded (the
	// run stopped before that row's first request, or the file was rejected as a whole).
	Payout *Payout
}

// RunReport returns a run's input lines in line order, each with its payout: what a report of
// the run shows. It is one query, so one consistent read even while callbacks change payouts.
// An unknown run has no lines.
func (db *DB) RunReport(ctx context.Context, runID string) ([]ReportLine, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT p.ref IS NOT NULL, r.run_id, r.line, r.ref, r.recipient,
		r.provider_id, r.bank, r.account, r.amount, r.description, r.rejected, r.reason, r.skipped, `+
		joinedPayoutColumns+` FROM run_rows r LEFT JOIN payouts p ON p.ref = r.ref AND NOT r.rejected
		WHERE r.run_id = ? ORDER BY r.line`, runID)
	if err != nil {
		return nil, fmt.Errorf("report of run %s: %w", runID, err)
	}
	defer rows.Close()
	var out []ReportLine
	for rows.Next() {
		var line ReportLine
		var recorded bool
		r := &line.Row
		head := headScanner{rows: rows, head: []any{&recorded, &r.RunID, &r.Line, &r.Ref, &r.Recipient,
			&r.ProviderID, &r.Bank, &r.Account, &r.Amount, &r.Description, &r.Rejected, &r.Reason, &r.Skipped}}
		p, err := scanPayout(head)
		if err != nil {
			return nil, fmt.Errorf("report of run %s: %w", runID, err)
		}
		if recorded {
			line.Payout = &p
		}
		out = append(out, line)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("report of run %s: %w", runID, err)
	}
	return out, nil
}

// headScanner scans its head destinations, then the ones scanPayout asks for, from one row.
type headScanner struct {
	rows *sql.Rows
	head []any
}

func (s headScanner) Scan(dest ...any) error {
	return s.rows.Scan(append(s.head, dest...)...)
}

// joinedPayoutColumns reads payoutColumns of "p" through a LEFT JOIN: a line without a payout
// reads each column's zero value, which scanPayout parses like any row's.
var joinedPayoutColumns = func() string {
	var cols []string
	for _, c := range strings.Split(payoutColumns, ",") {
		c = strings.TrimSpace(c)
		zero := "''"
		switch c {
		case "line", "provider_id", "attempts", "not_found_count":
			zero = "0"
		case "amount":
			zero = "'0'"
		}
		cols = append(cols, "COALESCE(p."+c+", "+zero+")")
	}
	return strings.Join(cols, ", ")
}()
