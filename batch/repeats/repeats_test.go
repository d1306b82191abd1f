package repeats_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/batch/repeats"
)

// A row new to the ledger that pays the account, bank and amount of a payout paid within the
// window under another reference is held, naming that payout and how to pay it all the same;
// one the policy allows, one paid before the window and one to another account are not. The
// guard holds alike whether it reads the recent accounts first (a pass that sends nothing) or
// looks every row up.
func TestGuardHoldsWhatTheLedgerPaidRecently(t *testing.T) {
	ctx := context.Background()
	h := batchtest.NewHarness(t, sandbox.Options{})
	paid := batchtest.Payroll(2, "PAID")
	if res := h.Run(ctx, batchtest.WritePayroll(t, h.Dir, "paid.csv", paid), nil); res.ExitCode != exitcode.OK {
		t.Fatalf("setup run %+v", res)
	}
	old, err := h.DB.Get(ctx, paid[0].Ref)
	if err != nil {
		t.Fatal(err)
	}
	row := func(line int, ref, account string) repeats.Row {
		return repeats.Row{Line: line, Ref: ref, Account: account, RawAccount: account, ProviderID: old.ProviderID, Amount: old.Amount}
	}
	// AGAIN-2 writes the account with a leading zero, as a spreadsheet that keeps it as text does.
	rows := []repeats.Row{row(2, "AGAIN-1", old.Account), row(3, "ALLOWED-1", old.Account), row(4, "OTHER-1", old.Account+"9"),
		row(5, "AGAIN-2", "0"+old.Account)}
	policy := repeats.Policy{Allow: map[string]bool{"ALLOWED-1": true}}
	for _, readFirst := range []bool{false, true} {
		g := repeats.NewGuard(h.DB, policy, time.Now, time.UTC)
		if err := g.ReadRecent(ctx, 100, readFirst); err != nil {
			t.Fatal(err)
		}
		held, err := g.Hold(ctx, rows)
		if err != nil {
			t.Fatal(err)
		}
		e, ok := held[2]
		if len(held) != 2 || !ok || !errors.Is(e, read.ErrPossibleRepeat) || !strings.Contains(e.Error(), paid[0].Ref) ||
			!strings.Contains(e.Error(), "paid.csv") || !strings.Contains(e.Error(), "--allow-repeat AGAIN-1") {
			t.Errorf("read first %t: held %v, want lines 2 and 5, line 2 naming %s, its file and how to pay it", readFirst, held, paid[0].Ref)
		}
		if e, ok := held[5]; !ok || !errors.Is(e, read.ErrPossibleRepeat) {
			t.Errorf("read first %t: line 5 (the account with a leading zero) held %v, want a possible repeat", readFirst, e)
		}
	}
	later := func() time.Time { return time.Now().Add(repeats.DefaultWindow + time.Hour) }
	if held, err := repeats.NewGuard(h.DB, repeats.Policy{}, later, time.UTC).Hold(ctx, rows); err != nil || len(held) != 0 {
		t.Errorf("after the window: held %v (%v), want none", held, err)
	}
	if held, err := repeats.NewGuard(h.DB, repeats.Policy{AllowAll: true}, time.Now, time.UTC).Hold(ctx, rows); err != nil || len(held) != 0 {
		t.Errorf("--allow-repeats: held %v (%v), want none", held, err)
	}
}
