package ledgertest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/payout/payout/ledger"
)

// testFindPayouts: each field of the payout filter selects what it says, List and WalkPayouts
// (whatever its page) give the same payouts in the same order, and one payout is found by its
// reference, or among a list of references.
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
		{ledger.Filter{States: []ledger.State{ledger.Submitted}, Latest: 2}, []string{"new-c", "new-a"}},
		{ledger.Filter{States: []ledger.State{ledger.Succeeded}}, nil},
		{ledger.Filter{InvoiceNo: "INV-N2"}, []string{fresh[2].Ref}},
		{ledger.Filter{InvoiceNo: "INV-NONE"}, nil},
		{ledger.Filter{States: []ledger.State{ledger.Ready}, InvoiceNo: "INV-N2"}, nil},
	} {
		list, err := l.List(ctx, c.f)
		if got := refs(list); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("List(%+v): %v %v, want %v", c.f, got, err, c.want)
		}
		if c.f.Latest != 0 {
			continue
		}
		for _, page := range []int{1, 3, 100} {
			var walked []string
			err := l.WalkPayouts(ctx, c.f, page, func(p ledger.Payout) error { walked = append(walked, p.Ref); return nil })
			if err != nil || !slices.Equal(walked, c.want) {
				t.Errorf("WalkPayouts(%+v) in pages of %d: %v %v, want %v", c.f, page, walked, err, c.want)
			}
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
