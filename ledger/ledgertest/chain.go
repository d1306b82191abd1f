package ledgertest

import (
	"context"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/ledger"
)

// testChain: every write extends the chain by its events, the head a write returns is the head
// the ledger reports, and the whole chain verifies.
func testChain(t *testing.T, e Engine) {
	l := e.New(t)
	ctx := context.Background()
	empty, err := l.ChainHead(ctx)
	must(t, err)
	ps := seed(t, l, "r1", 4)
	afterRecord, err := l.ChainHead(ctx)
	must(t, err)
	// The payouts' events and the run's row events (run, lines) are links of one chain.
	if afterRecord.ID < empty.ID+int64(len(ps)) || afterRecord.Hash == "" || afterRecord.Hash == empty.Hash {
		t.Errorf("head %v after recording %d payouts on %v", afterRecord, len(ps), empty)
	}
	settle(t, l, ps)
	moveTo(t, l, ps[2].Ref, ledger.Submitting, ledger.Unknown)
	must(t, l.Apply(ctx, ledger.Change{Ref: ps[2].Ref, From: ledger.Unknown, To: ledger.Unknown, CountNotFound: true, Detail: "not found"}))
	must(t, l.FinishRun(ctx, "r1", "finished", 0, t0.Add(1)))
	head, err := l.ChainHead(ctx)
	must(t, err)
	rep := intact(t, l)
	// 4 recorded, 2 paid in 3 moves each, 1 in 2 moves and a lookup's event.
	if rep.Head != head || rep.Payouts != len(ps) || rep.Events != 1+13 || rep.RowEvents == 0 {
		t.Errorf("verify %+v, want head %v over %d payouts, 1+13 events (the policy's genesis first) and the run's row events", rep, head, len(ps))
	}
	p := mustGet(t, l, ps[2].Ref)
	if p.State != ledger.Unknown || p.NotFoundCount != 1 || p.FirstNotFoundAt.IsZero() || p.Attempts != 0 {
		t.Errorf("payout after a lookup said not found: %+v", p)
	}
	evs := mustEvents(t, l, ps[0].Ref)
	for i := 1; i < len(evs); i++ {
		if evs[i].ID <= evs[i-1].ID || evs[i].At.Before(evs[i-1].At) {
			t.Errorf("events out of order: %+v", evs)
		}
	}
}

// testTotals: the running totals per state equal a scan of every payout, after records and
// moves of every kind, and amounts keep their exact value.
func testTotals(t *testing.T, e Engine) {
	l := e.New(t)
	ctx := context.Background()
	addRun(t, l, "r1", 0)
	amounts := []string{"0.01", "10.00", "1234567.89", "99.99", "0.10", "5000.50", "7.77", "1.00"}
	var ps []ledger.Payout
	for i, a := range amounts {
		ps = append(ps, payout("t-"+a, a, i+2))
	}
	rows := make([]ledger.RunRow, len(ps))
	for i, p := range ps {
		rows[i] = rowOf(p)
	}
	must(t, l.Record(ctx, "r1", rows, ps))
	moveTo(t, l, ps[0].Ref, ledger.Submitting)
	moveTo(t, l, ps[1].Ref, ledger.Submitting, ledger.Submitted)
	moveTo(t, l, ps[2].Ref, ledger.Submitting, ledger.Submitted, ledger.Succeeded)
	moveTo(t, l, ps[3].Ref, ledger.Submitting, ledger.Unknown)
	moveTo(t, l, ps[4].Ref, ledger.Submitting, ledger.Unknown, ledger.Failed)
	moveTo(t, l, ps[5].Ref, ledger.Submitting, ledger.Unknown, ledger.Failed, ledger.Submitted)
	moveTo(t, l, ps[6].Ref, ledger.Submitting, ledger.Ready)
	totals, err := l.Counts(ctx, ledger.CountRead{})
	must(t, err)
	counts := totals.States
	all := Payouts(t, l, ledger.Filter{})
	scan := make(map[ledger.State]ledger.CountAmount)
	for _, p := range all {
		c := scan[p.State]
		c.Count++
		c.Amount = c.Amount.Add(p.Amount)
		scan[p.State] = c
	}
	for _, s := range states {
		if got, want := counts[s], scan[s]; got.Count != want.Count || !got.Amount.Equal(want.Amount) {
			t.Errorf("%s: totals %d %s, scan %d %s", s, got.Count, got.Amount, want.Count, want.Amount)
		}
	}
	var sum decimal.Decimal
	for _, c := range counts {
		sum = sum.Add(c.Amount)
	}
	if want := decimal.RequireFromString("1239687.26"); !sum.Equal(want) || len(all) != len(ps) {
		t.Errorf("totals sum to %s over %d payouts, want %s over %d", sum, len(all), want, len(ps))
	}
	intact(t, l)
}
