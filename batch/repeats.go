package batch

import (
	"context"

	"github.com/payout/payout/batch/repeats"
	"github.com/payout/payout/ledger"
)

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
