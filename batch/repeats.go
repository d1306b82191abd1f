package batch

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/ledger"
)

// DefaultRepeatWindow is how far back a row is compared with the ledger's payouts. Six days
// catch a file paid twice in one week, or last week's file exported again within days, and
// never hold a weekly payroll, which pays the same people the same amounts every seven days.
const DefaultRepeatWindow = 6 * 24 * time.Hour

// RepeatPolicy says which rows are held as possible repeats: a row new to the ledger that pays
// the account, bank and amount of a payout recorded within Window under another reference, or of
// an earlier row of the same file. A held row is not sent; like a rejected row, it stops the
// file unless --allow-partial.
type RepeatPolicy struct {
	Window   time.Duration // DefaultRepeatWindow when 0
	AllowAll bool          // --allow-repeats: hold nothing
	Allow    map[string]bool
}

func (p RepeatPolicy) allows(ref string) bool { return p.AllowAll || p.Allow[ref] }

func (p RepeatPolicy) window() time.Duration {
	if p.Window <= 0 {
		return DefaultRepeatWindow
	}
	return p.Window
}

// hint says how to pay a held row all the same.
func (p RepeatPolicy) hint(ref string) string {
	return fmt.Sprintf("not sent; if it is meant, run again with --allow-repeat %s (or --allow-repeats for the whole file)", ref)
}

// holdRepeats holds the chunk's valid rows new to the ledger that pay the account, bank and
// amount of a payout it recorded within the window under another reference. Accounts that
// differ only in leading zeros count as the same (ledger.AccountDigits).
func (s *fileScan) holdRepeats(ctx context.Context, rows []fileRow, existing map[string]ledger.Payout) error {
	if s.rules.AllowAll {
		return nil
	}
	var payees []ledger.Payee
	for i := range rows {
		pay := rows[i].payment
		if _, recorded := existing[pay.Ref]; !rows[i].valid() || recorded || s.rules.allows(pay.Ref) {
			continue
		}
		p := ledger.Payee{Ref: pay.Ref, Account: pay.Account, ProviderID: pay.ProviderID, Amount: pay.Amount}
		if s.recent == nil || s.recent.Holds(p) {
			payees = append(payees, p)
		}
	}
	if len(payees) == 0 {
		return nil
	}
	earlier, err := s.db.RecentPayouts(ctx, payees, s.now().Add(-s.rules.window()))
	if err != nil || len(earlier) == 0 {
		return err
	}
	for i := range rows {
		row := &rows[i]
		old, ok := earlier[row.payment.Ref]
		if !row.valid() || !ok {
			continue
		}
		run, err := s.run(ctx, old.RunID)
		if err != nil {
			return err
		}
		zeros := ""
		if old.Account != row.payment.Account {
			zeros = fmt.Sprintf(" (account %s there, %s here: they differ only in leading zeros, which a spreadsheet may have dropped)",
				old.Account, row.payment.Account)
		}
		row.errs = append(row.errs, &read.RowError{Line: row.raw.Line, Column: read.ColAccount, Value: row.raw.Account,
			Err: fmt.Errorf("%w as %s%s, recorded by run %s from %s on %s; %s", read.ErrPossibleRepeat, old.Ref, zeros, old.RunID,
				filepath.Base(run.File), dayIn(old.CreatedAt, s.zone), s.rules.hint(row.payment.Ref))})
	}
	return nil
}

// readRecentPayees reads, for a pass that sends nothing, the accounts the ledger paid within the
// window when it paid no more than a chunk's worth: a big file is then checked for repeats in
// memory, and only a row whose account was paid is looked up. The pass that records and sends
// looks every row up, as of the moment it records it.
func (s *fileScan) readRecentPayees(ctx context.Context) error {
	s.recent = nil
	if s.db == nil || s.sends || s.rules.AllowAll {
		return nil
	}
	var err error
	s.recent, err = s.db.RecentPayees(ctx, s.now().Add(-s.rules.window()), s.chunk)
	return err
}

func (s *fileScan) run(ctx context.Context, id string) (ledger.Run, error) {
	if run, ok := s.runs[id]; ok {
		return run, nil
	}
	run, err := s.db.GetRun(ctx, id)
	if err != nil {
		return run, err
	}
	if s.runs == nil {
		s.runs = make(map[string]ledger.Run)
	}
	s.runs[id] = run
	return run, nil
}
