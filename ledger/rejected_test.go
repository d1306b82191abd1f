package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/ledger"
)

func TestRejectedRowsCountOnceAndOnlyWhileUnpaid(t *testing.T) {
	t.Parallel()
	db, _ := mustOpen(t)
	ctx := context.Background()
	rejected := func(line int, ref, amount string) ledger.RunRow {
		return ledger.RunRow{Line: line, Ref: ref, Amount: amount, Rejected: true, Reason: "bad"}
	}
	for _, id := range []string{"r1", "r2", "r3"} {
		if err := db.AddRun(ctx, ledger.Run{ID: id, Kind: "run", StartedAt: time.Now(), Status: "running"}); err != nil {
			t.Fatal(err)
		}
	}
	// r1 and r2 are one file dropped twice: 12.345 (bad decimals), not-a-number, a row without a
	// reference whose amount is written with a thousands separator.
	for _, id := range []string{"r1", "r2"} {
		if err := db.Record(ctx, id, []ledger.RunRow{rejected(2, "A", "12.345"), rejected(3, "B", "x"),
			rejected(4, "", "RM 1,000.00"), rejected(5, "FIXED", "7.00")}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// r3 pays FIXED, corrected.
	fixed := payout("FIXED", "7.00", 2)
	if err := db.Record(ctx, "r3", []ledger.RunRow{{Line: 2, Ref: "FIXED", Amount: "7.00"}}, []ledger.Payout{fixed}); err != nil {
		t.Fatal(err)
	}
	totals, err := db.Counts(ctx, ledger.CountRead{RejectedRows: true})
	if err != nil {
		t.Fatal(err)
	}
	got := totals.RejectedRows
	// A and B once each, the row without a reference once per run; FIXED is paid now.
	if got.Count != 4 || !got.Amount.Equal(decimal.RequireFromString("2012.345")) {
		t.Errorf("rejected rows %d, %s; want 4, 2012.345", got.Count, got.Amount)
	}
}
