package intake

import (
	"context"
	"fmt"
	"strings"

	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/ledger"
)

// Survey is what a run learns of a file before it records or sends anything: whether it may be
// paid, and what paying it would do. It holds no rows.
type Survey struct {
	scan     fileScan
	sum      string // the SHA-256 of the bytes the survey read its rows from
	sheet    string
	header   []string
	rows     int
	rejected int
	// problems and warnings are the first MaxProblems of each, in line order.
	problems, warnings []Problem
	// digests sum up each chunk as read (fileScan.digest).
	digests []uint64
	// toPay counts the valid rows and valid their total; fresh and freshTotal the valid rows the
	// ledger does not hold yet: the payouts a run would create.
	toPay, fresh           int
	unsettled              int // valid rows a run may send (Plan.unsettled)
	validTotal, freshTotal read.Total
	// rejectedTotal is what the rejected rows whose amount reads as a number add up to, as written.
	rejectedTotal read.Total
	// text is the plan statement's rows, as the file alone makes them payable or not.
	text planText
}

func newSurvey(scan fileScan) *Survey {
	return &Survey{scan: scan, text: planText{keep: scan.planText}}
}

// SurveyFile reads the whole file o names once, or twice when it has duplicate references (the second
// pass rejects every row of them where it meets them). File-level problems (no rows, too many,
// total over --max-total) are returned as a *read.FileError.
func SurveyFile(ctx context.Context, o Options) (*Survey, error) {
	scan := newScan(o)
	sv, found, err := surveyPass(ctx, scan)
	if err != nil {
		return nil, err
	}
	if again, ok := scan.withDuplicates(found); ok {
		if sv, _, err = surveyPass(ctx, again); err != nil {
			return nil, err
		}
	}
	if len(found.File) > 0 {
		return nil, &read.FileError{Path: scan.path, Errs: found.File}
	}
	return sv, nil
}

func surveyPass(ctx context.Context, scan fileScan) (*Survey, read.Findings, error) {
	scan.hash = true
	sv := newSurvey(scan)
	sc, err := scan.each(ctx, func(rows []fileRow, existing map[string]ledger.Payout) error {
		sv.digests = append(sv.digests, scan.digest(rows))
		for i := range rows {
			sv.add(&rows[i], existing)
		}
		return nil
	})
	if err != nil {
		return nil, read.Findings{}, err
	}
	sv.sum, sv.sheet, sv.header = sc.sum, sc.sheet, sc.header
	return sv, sc.found, nil
}

func (sv *Survey) add(row *fileRow, existing map[string]ledger.Payout) {
	sv.rows++
	sv.text.add(row)
	if !row.valid() {
		sv.rejected++
		if amount, ok := ledger.AmountAsWritten(row.raw.Amount); ok {
			sv.rejectedTotal.Add(amount)
		}
		for _, e := range row.errs {
			if len(sv.problems) < MaxProblems {
				sv.problems = append(sv.problems, Problem{Line: e.Line, Column: e.Column, Value: e.Value, Reason: e.Err.Error()})
			}
		}
		return
	}
	for _, w := range row.raw.Warnings {
		if len(sv.warnings) < MaxProblems {
			sv.warnings = append(sv.warnings, Problem{Line: row.raw.Line, Column: read.ColAccount, Value: row.raw.Account, Reason: w})
		}
	}
	sv.toPay++
	sv.validTotal.Add(row.payment.Amount)
	old, ok := existing[row.payment.Ref]
	if !ok {
		sv.fresh++
		sv.freshTotal.Add(row.payment.Amount)
	}
	if !ok || old.State == ledger.Ready || old.State.OutcomeUnknown() {
		sv.unsettled++
	}
}

// rowWarnings is what a valid row's report says of its warnings (an account stored as a number,
// say): the row is paid, but whoever reads the report should check it.
func rowWarnings(row *fileRow) string {
	return strings.Join(row.raw.Warnings, "; ")
}

// Rows counts the file's rows; Rejected those rejected or held.
func (sv *Survey) Rows() int     { return sv.rows }
func (sv *Survey) Rejected() int { return sv.rejected }

// ToPay counts the valid rows: those a run records and pays unless the file is rejected.
func (sv *Survey) ToPay() int { return sv.toPay }

// Problems and Warnings are the first MaxProblems rejections and warnings, in line order.
func (sv *Survey) Problems() []Problem { return sv.problems }
func (sv *Survey) Warnings() []Problem { return sv.warnings }

// Sheet is the workbook's sheet the rows were read from ("" for a CSV file); Header the file's
// column names, in file order.
func (sv *Survey) Sheet() string    { return sv.sheet }
func (sv *Survey) Header() []string { return sv.header }

// SameFile checks that the bytes the survey read are those whose SHA-256 was opened when the
// file was opened first: a path that names other bytes by then (a swapped symlink) stops a run.
func (sv *Survey) SameFile(opened string) error {
	if sv.sum != opened {
		return fmt.Errorf("%w: its SHA-256 was %s when opened first, %s when its rows were read", ErrFileChanged, opened, sv.sum)
	}
	return nil
}
