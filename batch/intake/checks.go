package intake

import (
	"context"
	"errors"
	"fmt"

	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/batch/repeats"
	"github.com/payout/payout/batch/retry"
	"github.com/payout/payout/ledger"
)

// ErrRetryOfPaid rejects a row paying a retry (a reference a retry file derived for a payout the
// service refused) when the ledger no longer holds that payout as refused: a reconciliation found
// it at the service after all, and paying the retry would pay twice.
var ErrRetryOfPaid = errors.New("a retry of a payout the service holds after all")

// checkRetries rejects the chunk's valid rows new to the ledger that would pay a retry of a
// payout no longer FAILED, or that pay another account, bank or amount than the payout they
// retry (a retry file saved by a spreadsheet loses the leading zeros of account numbers).
func checkRetries(ctx context.Context, db Ledger, rows []fileRow, existing map[string]ledger.Payout) error {
	var refs []string
	for i := range rows {
		if _, recorded := existing[rows[i].payment.Ref]; rows[i].valid() && !recorded && retry.MayBeRef(rows[i].payment.Ref) {
			refs = append(refs, rows[i].payment.Ref)
		}
	}
	retries, err := db.Retries(ctx, ledger.RetryFilter{New: refs})
	if err != nil || len(retries) == 0 {
		return err
	}
	for i := range rows {
		row := &rows[i]
		retry, ok := retries[row.payment.Ref]
		if !row.valid() || !ok {
			continue
		}
		old, err := db.Get(ctx, retry.Old)
		if err != nil {
			return err
		}
		if old.State != ledger.Failed {
			row.errs = append(row.errs, &read.RowError{Line: row.raw.Line, Column: read.ColRef, Value: row.payment.Ref,
				Err: fmt.Errorf("%w: it replaces %s, which the ledger now holds as %s; delete this row", ErrRetryOfPaid, old.Ref, old.State)})
			continue
		}
		row.errs = append(row.errs, retryChanges(row, old)...)
	}
	return nil
}

// ErrRetryChanged rejects a retry row that pays another account, bank or amount than the payout
// it retries: a retry pays what was refused, as it was recorded.
var ErrRetryChanged = errors.New("a retry must pay what the payout it retries would have paid")

// retryChanges lists where a retry row differs from the payout it retries, each with both values.
func retryChanges(row *fileRow, old ledger.Payout) []*read.RowError {
	pay := row.payment
	var errs []*read.RowError
	differs := func(col, value, what, here, there, why string) {
		errs = append(errs, &read.RowError{Line: row.raw.Line, Column: col, Value: value,
			Err: fmt.Errorf("%w: %s %s here, %s in %s, the payout it retries%s; put back %s's, or give the row a new reference to pay other details",
				ErrRetryChanged, what, here, there, old.Ref, why, old.Ref)})
	}
	if pay.Account != old.Account {
		why := ""
		if ledger.AccountDigits(pay.Account) == ledger.AccountDigits(old.Account) {
			why = " (a spreadsheet may have dropped leading zeros)"
		}
		differs(read.ColAccount, row.raw.Account, "account", pay.Account, old.Account, why)
	}
	if pay.ProviderID != old.ProviderID {
		differs(read.ColBank, row.raw.Bank, "bank", fmt.Sprintf("%s (%d)", pay.Bank, pay.ProviderID),
			fmt.Sprintf("%s (%d)", old.Bank, old.ProviderID), "")
	}
	if !pay.Amount.Equal(old.Amount) {
		differs(read.ColAmount, row.raw.Amount, "amount", pay.Amount.StringFixed(2), old.Amount.StringFixed(2), "")
	}
	return errs
}

// repeatGuard is the scan's guard against repeats, made at its first use.
func (s *fileScan) repeatGuard() *repeats.Guard {
	if s.guard == nil {
		s.guard = repeats.NewGuard(s.db, s.rules, s.now, s.zone)
	}
	return s.guard
}

// holdRepeats holds the chunk's valid rows new to the ledger that pay the account, bank and
// amount of a payout it recorded within the window under another reference (repeats.Guard).
func (s *fileScan) holdRepeats(ctx context.Context, rows []fileRow, existing map[string]ledger.Payout) error {
	if s.rules.AllowAll {
		return nil
	}
	var candidates []repeats.Row
	for i := range rows {
		pay := rows[i].payment
		if _, recorded := existing[pay.Ref]; !rows[i].valid() || recorded {
			continue
		}
		candidates = append(candidates, repeats.Row{Line: rows[i].raw.Line, Ref: pay.Ref, Account: pay.Account,
			RawAccount: rows[i].raw.Account, ProviderID: pay.ProviderID, Amount: pay.Amount})
	}
	if len(candidates) == 0 {
		return nil
	}
	held, err := s.repeatGuard().Hold(ctx, candidates)
	if err != nil {
		return err
	}
	for i := range rows {
		if e, ok := held[rows[i].raw.Line]; ok {
			rows[i].errs = append(rows[i].errs, e)
		}
	}
	return nil
}

// readRecentPayees reads, for a pass that sends nothing, the accounts the ledger paid recently
// (repeats.Guard.ReadRecent).
func (s *fileScan) readRecentPayees(ctx context.Context) error {
	if s.db == nil {
		return nil
	}
	return s.repeatGuard().ReadRecent(ctx, s.chunk, !s.sends)
}
