package reconcile

import (
	"context"

	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/batch/words"
	"github.com/payout/payout/ledger"
)

// addNameChecks puts on each row the name the bank holds for the account, as the payout's
// callback said, and how it compares with the recipient, and returns how many differ. A lookup
// carries no name: only callbacks do. A mismatch changes no state and no exit code.
func addNameChecks(ctx context.Context, db ledger.ReconcileStore, rows []report.ReconRow) (int, error) {
	refs := make([]string, len(rows))
	for i, r := range rows {
		refs[i] = r.Ref
	}
	found, err := db.NameChecks(ctx, ledger.NameFilter{Refs: refs})
	if err != nil {
		return 0, err
	}
	names := make(map[string]ledger.NameCheck, len(found))
	for _, c := range found {
		names[c.Ref] = c
	}
	mismatches := 0
	for i := range rows {
		c, ok := names[rows[i].Ref]
		if !ok {
			continue
		}
		rows[i].NameAtBank = c.DisplayName
		switch c.Check {
		case ledger.NameMatch:
			rows[i].NameCheck = words.NameMatch
		case ledger.NameMismatch:
			rows[i].NameCheck = words.NameMismatch
			mismatches++
		}
	}
	return mismatches, nil
}
