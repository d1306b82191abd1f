package batch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/ledger"
)

// parsedFile is a validated file: every row in order, with its payment or its errors.
type parsedFile struct {
	rows []parsedRow
	// existing holds ledger payouts with the same refs, found before recording.
	existing map[string]ledger.Payout
	header   []string // the file's column names, in file order
}

type parsedRow struct {
	raw     read.Row
	payment read.Payment
	errs    []*read.RowError
}

func (p *parsedFile) rejectedCount() int {
	n := 0
	for _, row := range p.rows {
		if len(row.errs) > 0 {
			n++
		}
	}
	return n
}

// problems lists the first max rejections in file order.
func (p *parsedFile) problems(max int) []Problem {
	var out []Problem
	for _, row := range p.rows {
		for _, e := range row.errs {
			if len(out) == max {
				return out
			}
			out = append(out, Problem{Line: e.Line, Column: e.Column, Value: e.Value, Reason: e.Err.Error()})
		}
	}
	return out
}

// warnings lists the first max warnings of valid rows in file order.
func (p *parsedFile) warnings(max int) []Problem {
	var out []Problem
	for _, row := range p.rows {
		if len(row.errs) > 0 {
			continue
		}
		for _, w := range row.raw.Warnings {
			if len(out) == max {
				return out
			}
			out = append(out, Problem{Line: row.raw.Line, Column: read.ColAccount, Value: row.raw.Account, Reason: w})
		}
	}
	return out
}

// readAndValidate reads every row and validates it. A ref seen twice rejects every row that
// carries it: with --allow-partial, paying the first and refusing the second would be a guess.
func readAndValidate(path string, ropts read.Options, vopts read.ValidateOptions) (*parsedFile, error) {
	rd, err := read.OpenFile(path, ropts)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	v := read.NewValidator(vopts)
	parsed := &parsedFile{header: read.Header(rd)}
	for {
		row, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		payment, errs := v.Check(row)
		parsed.rows = append(parsed.rows, parsedRow{raw: row, payment: payment, errs: errs})
	}
	found := v.Finish()
	for _, dup := range found.Duplicates {
		// Rows are in line order; a duplicate's error goes first, where Check puts the ref's.
		i, ok := slices.BinarySearchFunc(parsed.rows, dup.Line, func(r parsedRow, line int) int { return r.raw.Line - line })
		if !ok {
			return nil, fmt.Errorf("duplicate check: line %d is not a row of %s", dup.Line, filepath.Base(path))
		}
		row := &parsed.rows[i]
		dup.Value = row.raw.Ref
		row.errs = append([]*read.RowError{dup}, row.errs...)
	}
	if len(found.File) > 0 {
		// File-level rules (no rows, total over the limit) are not about one row: they stop the file.
		return nil, &FileError{Path: path, Errs: found.File}
	}
	return parsed, nil
}

// FileError is a file rejected as a whole (no rows, total over --max-total, ...).
type FileError struct {
	Path string
	Errs []*read.RowError
}

func (e *FileError) Error() string {
	msg := filepath.Base(e.Path) + ": "
	for i, err := range e.Errs {
		if i > 0 {
			msg += "; "
		}
		msg += err.Error()
	}
	return msg
}

// Unwrap gives the reasons, for errors.Is.
func (e *FileError) Unwrap() []error {
	errs := make([]error, len(e.Errs))
	for i, err := range e.Errs {
		errs[i] = err
	}
	return errs
}

// ErrLedgerConflict rejects a row whose reference the ledger already holds with other details:
// paying it would either pay twice or pay the wrong account or amount.
var ErrLedgerConflict = errors.New("reference already in the ledger with other details")

// checkLedger rejects rows whose reference the ledger already holds with other details, and
// remembers the rest of what the ledger holds for these refs.
func (p *parsedFile) checkLedger(ctx context.Context, db *ledger.DB) error {
	refs := make([]string, 0, len(p.rows))
	for _, row := range p.rows {
		if len(row.errs) == 0 {
			refs = append(refs, row.payment.Ref)
		}
	}
	existing, err := db.Lookup(ctx, refs)
	if err != nil {
		return err
	}
	p.existing = existing
	for i := range p.rows {
		row := &p.rows[i]
		if len(row.errs) > 0 {
			continue
		}
		old, ok := existing[row.payment.Ref]
		if !ok || old.SameDetails(toLedgerPayout(row.payment, "")) {
			continue
		}
		row.errs = append(row.errs, &read.RowError{Line: row.raw.Line, Column: "external_invoice_ref", Value: row.payment.Ref,
			Err: fmt.Errorf("%w: run %s line %d has it for %s MYR to account %s at provider %d; use a new reference",
				ErrLedgerConflict, old.RunID, old.Line, old.Amount.StringFixed(2), MaskAccount(old.Account), old.ProviderID)})
	}
	return p.checkRetries(ctx, db)
}

func toLedgerPayout(p read.Payment, runID string) ledger.Payout {
	return ledger.Payout{Ref: p.Ref, RunID: runID, Line: p.Line, Recipient: p.Recipient, ProviderID: p.ProviderID,
		Bank: p.Bank, Account: p.Account, Amount: p.Amount, Description: p.Description, State: ledger.Ready}
}

// runRows is every line of the file as the ledger keeps it for reports.
func (p *parsedFile) runRows(submitAllowed bool) []ledger.RunRow {
	out := make([]ledger.RunRow, 0, len(p.rows))
	for _, row := range p.rows {
		rr := ledger.RunRow{Line: row.raw.Line, Ref: row.raw.Ref, Recipient: row.raw.Recipient, Bank: row.raw.Bank,
			Account: row.raw.Account, Amount: row.raw.Amount, Description: row.raw.Description}
		if len(row.errs) > 0 {
			rr.Rejected = true
			rr.Reason = joinRowErrors(row.errs)
		} else {
			pay := row.payment
			rr.Ref, rr.Recipient, rr.ProviderID, rr.Bank = pay.Ref, pay.Recipient, pay.ProviderID, pay.Bank
			rr.Account, rr.Amount, rr.Description = pay.Account, pay.Amount.StringFixed(2), pay.Description
			// Warnings (an account stored as a number, say) travel in Reason: the row is paid, but
			// whoever reads the report should check it.
			rr.Reason = strings.Join(row.raw.Warnings, "; ")
			if old, ok := p.existing[pay.Ref]; ok && submitAllowed && acceptedEarlier(old.State) {
				rr.Skipped = true
			}
		}
		out = append(out, rr)
	}
	return out
}

func joinRowErrors(errs []*read.RowError) string {
	msg := ""
	for i, e := range errs {
		if i > 0 {
			msg += "; "
		}
		msg += e.Column + ": " + e.Err.Error()
		if e.Value != "" {
			msg += fmt.Sprintf(" (value %q)", e.Value)
		}
	}
	return msg
}

// freshPayouts is the valid rows not yet in the ledger, recorded READY with the run's lines.
func (p *parsedFile) freshPayouts(runID string) []ledger.Payout {
	out := make([]ledger.Payout, 0, max(0, len(p.rows)-len(p.existing)))
	for _, row := range p.rows {
		if len(row.errs) > 0 {
			continue
		}
		if _, ok := p.existing[row.payment.Ref]; ok {
			continue
		}
		out = append(out, toLedgerPayout(row.payment, runID))
	}
	return out
}

// refsToPay is the valid rows' refs in file order.
func (p *parsedFile) refsToPay() []string {
	var refs []string
	for _, row := range p.rows {
		if len(row.errs) == 0 {
			refs = append(refs, row.payment.Ref)
		}
	}
	return refs
}
