package intake

import (
	"context"
	"errors"

	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/batch/runs"
	"github.com/payout/payout/ledger"
)

// ErrDuplicatesFound ends a dry run's pass that met duplicate references only at the end of
// the file: the pass after it rejects every row of them where it meets them.
var ErrDuplicatesFound = errors.New("duplicate references")

// DryRun checks a file and hands its rows on as they are read, in one pass: nothing is recorded
// or sent. A file with duplicate references is read a second time (ErrDuplicatesFound).
type DryRun struct {
	scan   fileScan
	opened string // the SHA-256 of the file when it was opened first
}

// NewDryRun is the dry run of the file o names, whose SHA-256 was opened when it was opened first.
func NewDryRun(o Options, opened string) *DryRun {
	return &DryRun{scan: newScan(o), opened: opened}
}

// Pass reads the file once, handing each row to add as a dry run reports it. It returns
// ErrDuplicatesFound, and is ready for the pass after it, when the file has duplicate references
// this pass could not yet reject.
func (d *DryRun) Pass(ctx context.Context, add func(report.Row) error) (*Survey, error) {
	// The plan a signature binds is of the bytes read, hashed through the open file as they
	// are read; a dry run that needs no signature shows the plan of the file as opened first,
	// and reads it once instead of twice.
	scan := d.scan
	scan.hash = scan.planText
	sv := newSurvey(scan)
	sc, err := scan.each(ctx, func(rows []fileRow, existing map[string]ledger.Payout) error {
		for i := range rows {
			sv.add(&rows[i], existing)
			if err := add(dryRunRow(&rows[i])); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sv.sum, sv.sheet = sc.sum, sc.sheet
	if !scan.hash {
		sv.sum = d.opened
	}
	if again, found := scan.withDuplicates(sc.found); found && scan.dups == nil {
		d.scan = again
		return nil, ErrDuplicatesFound
	}
	if len(sc.found.File) > 0 {
		return nil, &read.FileError{Path: scan.path, Errs: sc.found.File}
	}
	return sv, nil
}

// dryRunRow is a row as a dry run reports it: valid rows READY, the rest REJECTED.
func dryRunRow(row *fileRow) report.Row {
	raw := row.raw
	out := report.Row{Line: raw.Line, Ref: raw.Ref, Recipient: raw.Recipient, Bank: raw.Bank, Account: raw.Account,
		State: string(ledger.Rejected), Message: joinRowErrors(row.errs)}
	if row.valid() {
		pay := row.payment
		out.Ref, out.Recipient, out.ProviderID, out.Bank, out.Account = pay.Ref, pay.Recipient, pay.ProviderID, pay.Bank, pay.Account
		out.State, out.Message = string(ledger.Ready), runs.JoinMessages("valid (dry run: nothing sent)", rowWarnings(row))
		out.Amount = pay.Amount
	} else if d, ok := ledger.AmountAsWritten(raw.Amount); ok {
		out.Amount = d
	} else {
		out.AmountText = raw.Amount
	}
	return out
}
