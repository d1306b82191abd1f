package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// ReportLine is one input line of a run as its report shows it: the row as the run recorded it
// and, when the row is valid and its payout is in the ledger, that payout as it stands now.
type ReportLine struct {
	Row RunRow
	// Payout is nil for a rejected row, and for a valid row whose payout was never recorded (the
	// run stopped before that row's first request, or the file was rejected as a whole).
	Payout *Payout
}

// LineRead says how RunLines reads a run's lines. The zero value reads them in one query, each
// with its whole payout.
type LineRead struct {
	// Page, when above 0, reads Page lines at a time, each page a short read of its own: no read
	// is open while fn runs, so fn may write to the ledger, and a run of any size is walked
	// holding one page. When 0, the lines are one query, so one consistent read even while
	// callbacks change payouts.
	Page int
	// ReportOnly reads, of each payout, only what a report shows of it: its Ref, RunID, State,
	// Amount, InvoiceNo, TransactionStatus, Attempts, LastError and RefusalConfirmed; its other
	// fields are zero. A report reads every line of a run back, and most of that read is the
	// payout's columns.
	ReportOnly bool
}

// RunLines calls fn with each of a run's input lines in line order, each with its payout as it
// stands now: what a report of the run shows. A line is the run's own row in run_rows when it
// stored one, and otherwise the payout that a run of the same source, up to this one, recorded
// at that line (skipped when another run recorded it: the run stored every line it sent or looked
// up itself). how says whether the lines are read in one query or a page at a time, and how much
// of each payout is read; only one line, or one page, is held at a time. An unknown run has no
// lines.
func (db *DB) RunLines(ctx context.Context, runID string, how LineRead, fn func(ReportLine) error) error {
	cols, scan := payoutColumns, scanPayout
	if how.ReportOnly {
		cols, scan = reportPayoutColumns, scanReportPayout
	}
	if how.Page <= 0 {
		return db.eachLine(ctx, db.eng.runLinesQuery(cols, false), scan, fn, runID)
	}
	last, err := db.runLastLine(ctx, runID)
	if err != nil {
		return err
	}
	query := db.eng.runLinesQuery(cols, true)
	for from := 0; from <= last; from += how.Page {
		var page []ReportLine
		err := db.eachLine(ctx, query, scan, func(l ReportLine) error {
			page = append(page, l)
			return nil
		}, runID, from, from+how.Page)
		if err != nil {
			return err
		}
		for _, l := range page {
			if err := fn(l); err != nil {
				return err
			}
		}
	}
	return nil
}

// eachLine calls fn with each line query reads, its payout's columns scanned with scan; args
// are the query's parameters, the run's id first.
func (db *DB) eachLine(ctx context.Context, query string, scan func(scanner) (Payout, error), fn func(ReportLine) error, runID string, args ...any) error {
	rows, err := db.sql.QueryContext(ctx, query, append([]any{runID}, args...)...)
	if err != nil {
		return fmt.Errorf("report of run %s: %w", runID, err)
	}
	defer rows.Close()
	for rows.Next() {
		line, err := scanReportLine(rows, scan)
		if err != nil {
			return fmt.Errorf("report of run %s: %w", runID, err)
		}
		if err := fn(line); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("report of run %s: %w", runID, err)
	}
	return nil
}

// runLastLine returns the last line number the run has (see RunLines); 0 when it has none.
func (db *DB) runLastLine(ctx context.Context, runID string) (int, error) {
	var last int
	err := db.sql.QueryRowContext(ctx, `SELECT `+db.eng.greatest(`COALESCE((SELECT max(line) FROM run_rows WHERE run_id = $1), 0)`,
		`COALESCE((SELECT max(p.line) FROM runs s CROSS JOIN runs o`+db.eng.indexedBy("runs_by_source")+`
		`+db.eng.joinInOrder+`payouts p`+db.eng.indexedBy("payouts_by_run")+` ON p.run_id = o.id
		WHERE s.id = $1 AND o.source = s.source AND o.source <> '' AND o.started_at <= s.started_at), 0)`), runID).Scan(&last)
	if err != nil {
		return 0, fmt.Errorf("last line of run %s: %w", runID, err)
	}
	return last, nil
}

// scanReportLine scans a row of runLinesQuery, its payout's columns with scan.
func scanReportLine(rows *sql.Rows, scan func(scanner) (Payout, error)) (ReportLine, error) {
	var line ReportLine
	var recorded bool
	r := &line.Row
	head := headScanner{rows: rows, head: []any{&recorded, &r.RunID, &r.Line, &r.Ref, &r.Recipient,
		&r.ProviderID, &r.Bank, &r.Account, &r.Amount, &r.Description, &r.Rejected, &r.Reason, &r.Skipped, &r.PaidElsewhere}}
	p, err := scan(head)
	if err != nil {
		return ReportLine{}, err
	}
	if recorded {
		line.Payout = &p
	}
	return line, nil
}

// reportPayoutColumns are the columns of a payout that a report shows (LineRead.ReportOnly).
const reportPayoutColumns = `ref, run_id, state, amount, invoice_no, transaction_status, attempts, last_error, refusal_confirmed`

// scanReportPayout scans reportPayoutColumns.
func scanReportPayout(s scanner) (Payout, error) {
	var p Payout
	var state, amount string
	if err := s.Scan(&p.Ref, &p.RunID, &state, &amount, &p.InvoiceNo, &p.TransactionStatus, &p.Attempts, &p.LastError, &p.RefusalConfirmed); err != nil {
		return Payout{}, err
	}
	p.State = State(state)
	var err error
	if p.Amount, err = decimal.NewFromString(amount); err != nil {
		return Payout{}, fmt.Errorf("payout %s: amount %q: %w", p.Ref, amount, err)
	}
	return p, nil
}

// headScanner scans its head destinations, then the ones a payout's scanner asks for, from one row.
type headScanner struct {
	rows       *sql.Rows
	head, tail []any // columns before and after the scanned ones
}

func (s headScanner) Scan(dest ...any) error {
	all := append(append(append([]any{}, s.head...), dest...), s.tail...)
	return s.rows.Scan(all...)
}

// runLinesQuery reads a run's lines, with the columns cols of their payouts: its own rows, and
// the payouts of the runs of its source, each run's found through its index (the joins are in the
// order written, so that a big ledger is never scanned for them). Its parameter $1 is the run;
// with lineRange, $2 and $3 bound the lines read (from $2 up to, not including, $3).
func (e *engine) runLinesQuery(cols string, lineRange bool) string {
	rowLines, payoutLines := "", ""
	if lineRange {
		rowLines, payoutLines = " AND r.line >= $2 AND r.line < $3", " AND p.line >= $2 AND p.line < $3"
	}
	return `SELECT CASE WHEN p.ref IS NULL THEN 0 ELSE 1 END, r.run_id, r.line, r.ref, r.recipient,
		r.provider_id, r.bank, r.account, r.amount, r.description, r.rejected, r.reason, r.skipped, r.paid_elsewhere, ` +
		joinedColumns(cols) + ` FROM run_rows r LEFT JOIN payouts p ON p.ref = r.ref AND r.rejected = 0
		WHERE r.run_id = $1` + rowLines + `
		UNION ALL
		SELECT 1, $1, p.line, p.ref, p.recipient, p.provider_id, p.bank, p.account, p.amount, p.description,
		0, '', CASE WHEN p.run_id <> $1 THEN 1 ELSE 0 END, 0, ` + prefixed("p.", cols) + ` FROM runs s CROSS JOIN runs o` + e.indexedBy("runs_by_source") + `
		` + e.joinInOrder + `payouts p` + e.indexedBy("payouts_by_run") + ` ON p.run_id = o.id
		WHERE s.id = $1 AND o.source = s.source AND o.source <> '' AND o.started_at <= s.started_at` + payoutLines + `
		AND NOT EXISTS (SELECT 1 FROM run_rows x WHERE x.run_id = $1 AND x.line = p.line)
		ORDER BY 3`
}

// plainPayoutColumns reads payoutColumns of "p".
var plainPayoutColumns = prefixed("p.", payoutColumns)

// joinedColumns reads the payout columns cols of "p" through a LEFT JOIN: a line without a
// payout reads each column's zero value, which a payout's scanner parses like any row's.
func joinedColumns(cols string) string {
	var out []string
	for _, c := range strings.Split(cols, ",") {
		c = strings.TrimSpace(c)
		zero := "''"
		switch c {
		case "line", "provider_id", "attempts", "not_found_count", "refusal_confirmed":
			zero = "0"
		case "amount":
			zero = "'0'"
		}
		out = append(out, "COALESCE(p."+c+", "+zero+")")
	}
	return strings.Join(out, ", ")
}
