package ledgertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/ledger"
)

// testRepeatsAndRejects: a payee paid since a time is found under another reference whatever its
// account's leading zeros, unless that payout failed; rejected rows that were never paid are
// counted once per reference.
func testRepeatsAndRejects(t *testing.T, e Engine) {
	l := e.New(t)
	ctx := context.Background()
	ps := seed(t, l, "r1", 3) // account 0123456789, provider 7, 10.00 each
	moveTo(t, l, ps[2].Ref, ledger.Submitting, ledger.Unknown, ledger.Failed)
	ten := decimal.RequireFromString("10")
	found, err := l.RecentPayouts(ctx, []ledger.Payee{
		{Ref: "NEW-1", Account: "123456789", ProviderID: 7, Amount: ten},
		{Ref: "NEW-2", Account: "0123456789", ProviderID: 8, Amount: ten},
		{Ref: ps[0].Ref, Account: "0123456789", ProviderID: 7, Amount: decimal.RequireFromString("10.01")},
	}, t0.AddDate(-1, 0, 0))
	if err != nil || len(found) != 1 || found["NEW-1"].State == ledger.Failed || found["NEW-1"].Account != "0123456789" {
		t.Errorf("recent payouts: %+v %v, want one (not the FAILED one) for NEW-1 alone", found, err)
	}
	payees, err := l.RecentPayees(ctx, t0.AddDate(-1, 0, 0), 100)
	if err != nil || payees == nil || !payees[ledger.PaidAccount{Digits: "123456789", ProviderID: 7}] || payees[ledger.PaidAccount{Digits: "123456789", ProviderID: 8}] {
		t.Errorf("recent payees: %+v %v", payees, err)
	}
	if many, err := l.RecentPayees(ctx, t0.AddDate(-1, 0, 0), 2); err != nil || many != nil {
		t.Errorf("more payouts than the limit: %+v %v, want none read", many, err)
	}
	for _, run := range []string{"r2", "r3"} {
		addRun(t, l, run, 1)
		bad := rowOf(payout("BAD-1", "7.50", 2))
		bad.Rejected, bad.Reason = true, "account: not a number"
		must(t, l.Record(ctx, run, []ledger.RunRow{bad}, nil))
	}
	totals, err := l.Counts(ctx, ledger.CountRead{RejectedRows: true})
	if rej := totals.RejectedRows; err != nil || rej.Count != 1 || !rej.Amount.Equal(decimal.RequireFromString("7.5")) {
		t.Errorf("rejected rows: %+v %v, want one of 7.50 (rejected in two runs)", rej, err)
	}
	if without, err := l.Counts(ctx, ledger.CountRead{}); err != nil || without.RejectedRows.Count != 0 || fmt.Sprint(without.States) != fmt.Sprint(totals.States) {
		t.Errorf("counts without the rejected rows: %+v %v; want the same states as with them (%v) and no rejected rows", without, err, totals.States)
	}
}

// testEvidence: a run's events up to a head are its payouts' events, whoever recorded them, in
// the chain's order, and a report's read of its lines is the whole read's; the schema has a version.
func testEvidence(t *testing.T, e Engine) {
	l := e.New(t)
	ctx := context.Background()
	ps := seed(t, l, "r1", 3)
	moveTo(t, l, ps[0].Ref, ledger.Submitting)
	head, err := l.ChainHead(ctx)
	must(t, err)
	moveTo(t, l, ps[1].Ref, ledger.Submitting) // after the head: not in the evidence
	evs, err := l.RunEvents(ctx, "r1", head)
	must(t, err)
	if len(evs) != 4 {
		t.Errorf("%d events of r1 up to %v, want 4 (3 recorded, 1 move)", len(evs), head)
	}
	for i, ev := range evs {
		if ev.ID > head.ID || (i > 0 && ev.ID <= evs[i-1].ID) || ev.Salt == "" || ev.Hash == "" {
			t.Errorf("evidence event %+v", ev)
		}
	}
	lines := runLines(t, l, "r1", ledger.LineRead{})
	if len(lines) != len(ps) {
		t.Errorf("%d lines, want %d", len(lines), len(ps))
	}
	sameReportLines(t, l, "r1", ledger.LineRead{ReportOnly: true}, lines)
	// A later run of the same source that stored no line of its own (it resumed r1, and sent
	// nothing) shows r1's payouts in its report: its evidence holds their events.
	must(t, l.AddRun(ctx, ledger.Run{ID: "r1-again", Kind: "run", File: "r1.csv", FileSHA256: "sha-r1",
		StartedAt: t0.Add(time.Hour), Status: "running", Source: "sha-r1"}))
	head, err = l.ChainHead(ctx)
	must(t, err)
	evs, err = l.RunEvents(ctx, "r1-again", head)
	must(t, err)
	reported, withEvents := 0, map[string]bool{}
	for _, ev := range evs {
		withEvents[ev.Ref] = true
	}
	must(t, l.RunLines(ctx, "r1-again", ledger.LineRead{ReportOnly: true}, func(line ledger.ReportLine) error {
		reported++
		if !withEvents[line.Payout.Ref] {
			t.Errorf("r1-again's report shows %s, its evidence holds no event of it", line.Payout.Ref)
		}
		return nil
	}))
	if reported != len(ps) {
		t.Errorf("r1-again's report shows %d lines, want r1's %d", reported, len(ps))
	}
}
