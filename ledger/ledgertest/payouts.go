package ledgertest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/ledger"
)

// testFindPayouts: each field of the payout filter selects what it says (an account whatever its
// leading zeros), WalkPayouts gives the same payouts in the same order whatever its page (by run,
// then line; with Latest, at most that many, latest first), an error of fn ends the walk and is
// what it returns, and one payout is found by its reference, or among a list of references.
func testFindPayouts(t *testing.T, e Engine) {
	l := e.New(t)
	ctx := context.Background()
	old := seed(t, l, "old", 4)
	addRun(t, l, "new", 1)
	var fresh []ledger.Payout
	var rows []ledger.RunRow
	for i := range 4 {
		p := payout("new-"+string(rune('a'+i)), "2.00", i+2)
		fresh, rows = append(fresh, p), append(rows, rowOf(p))
	}
	must(t, l.Record(ctx, "new", rows, fresh))
	created := mustGet(t, l, fresh[0].Ref).CreatedAt
	moveTo(t, l, old[1].Ref, ledger.Submitting, ledger.Submitted)
	moveTo(t, l, old[3].Ref, ledger.Submitting, ledger.Unknown, ledger.Failed) // refused, nothing created
	moveTo(t, l, fresh[0].Ref, ledger.Submitting, ledger.Submitted)
	must(t, l.Apply(ctx, ledger.Change{Ref: fresh[2].Ref, From: ledger.Ready, To: ledger.Submitting}))
	must(t, l.Apply(ctx, ledger.Change{Ref: fresh[2].Ref, From: ledger.Submitting, To: ledger.Submitted, InvoiceNo: "INV-N2"}))
	refused := mustGet(t, l, old[3].Ref).UpdatedAt
	for _, c := range []struct {
		f    ledger.Filter
		want []string
	}{
		{ledger.Filter{}, []string{"old-0", "old-1", "old-2", "old-3", "new-a", "new-b", "new-c", "new-d"}},
		{ledger.Filter{States: []ledger.State{ledger.Submitted}}, []string{"old-1", "new-a", "new-c"}},
		{ledger.Filter{States: []ledger.State{ledger.Ready, ledger.Failed}}, []string{"old-0", "old-2", "old-3", "new-b", "new-d"}},
		{ledger.Filter{CreatedSince: created}, []string{"new-a", "new-b", "new-c", "new-d"}},
		{ledger.Filter{RefusedSince: refused}, []string{"old-3"}},
		{ledger.Filter{Account: "123456789", Amount: decimal.RequireFromString("2")}, []string{"new-a", "new-b", "new-c", "new-d"}},
		{ledger.Filter{Account: "000123456789", Amount: decimal.RequireFromString("10.00"), States: []ledger.State{ledger.Ready}}, []string{"old-0", "old-2"}},
		{ledger.Filter{Account: "123456780", Amount: decimal.RequireFromString("2.00")}, nil},
		{ledger.Filter{Account: "0123456789", Amount: decimal.RequireFromString("2.01")}, nil},
		{ledger.Filter{States: []ledger.State{ledger.Submitted}, Latest: 2}, []string{"new-c", "new-a"}},
		{ledger.Filter{States: []ledger.State{ledger.Submitted}, Latest: 5}, []string{"new-c", "new-a", "old-1"}},
		{ledger.Filter{Latest: 1}, []string{"new-d"}},
		{ledger.Filter{States: []ledger.State{ledger.Succeeded}, Latest: 3}, nil},
		{ledger.Filter{States: []ledger.State{ledger.Succeeded}}, nil},
		{ledger.Filter{InvoiceNo: "INV-N2"}, []string{fresh[2].Ref}},
		{ledger.Filter{InvoiceNo: "INV-NONE"}, nil},
		{ledger.Filter{States: []ledger.State{ledger.Ready}, InvoiceNo: "INV-N2"}, nil},
	} {
		for _, page := range []int{1, 3, 100} {
			var walked []string
			err := l.WalkPayouts(ctx, c.f, page, func(p ledger.Payout) error { walked = append(walked, p.Ref); return nil })
			if err != nil || !slices.Equal(walked, c.want) {
				t.Errorf("WalkPayouts(%+v) in pages of %d: %v %v, want %v", c.f, page, walked, err, c.want)
			}
		}
		if got := refs(Payouts(t, l, c.f)); !slices.Equal(got, c.want) {
			t.Errorf("Payouts(%+v): %v, want %v", c.f, got, c.want)
		}
	}
	stop := errors.New("stop")
	for _, f := range []ledger.Filter{{}, {Latest: 3}} {
		calls := 0
		err := l.WalkPayouts(ctx, f, 2, func(ledger.Payout) error { calls++; return stop })
		if !errors.Is(err, stop) || calls != 1 {
			t.Errorf("WalkPayouts(%+v) whose fn fails: %v after %d calls, want fn's error after one", f, err, calls)
		}
	}
	if _, err := l.Get(ctx, "nope"); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("an unknown payout: %v, want ErrNotFound", err)
	}
	details, err := l.Lookup(ctx, []string{old[1].Ref, "nope", fresh[3].Ref}, ledger.CheckFields)
	if err != nil || len(details) != 2 || details[old[1].Ref].State != ledger.Submitted || !details[fresh[3].Ref].Amount.Equal(fresh[3].Amount) {
		t.Errorf("details of two recorded payouts and an unknown one: %+v %v", details, err)
	}
}

func refs(ps []ledger.Payout) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Ref)
	}
	return out
}

// Payouts is every payout of the set f selects, as db's WalkPayouts gives them (by run, then
// line; with f.Latest, latest first): what a test checks a ledger holds. A failed read fails tb.
func Payouts(tb testing.TB, db payoutWalker, f ledger.Filter) []ledger.Payout {
	tb.Helper()
	var out []ledger.Payout
	err := db.WalkPayouts(context.Background(), f, 50, func(p ledger.Payout) error {
		out = append(out, p)
		return nil
	})
	if err != nil {
		tb.Fatalf("payouts of %+v: %v", f, err)
	}
	return out
}

// payoutWalker is what Payouts reads: a ledger, or any of its uses that walks payouts.
type payoutWalker interface {
	WalkPayouts(ctx context.Context, set ledger.Filter, page int, fn func(ledger.Payout) error) error
}
