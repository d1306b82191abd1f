package ledgertest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/ledger"
)

// states is every state a payout can be in.
var states = []ledger.State{ledger.Ready, ledger.Submitting, ledger.Submitted, ledger.Succeeded,
	ledger.Failed, ledger.Unknown, ledger.Rejected}

// pathTo is a way from READY to each state that Apply can reach; REJECTED is written only when a
// file is read, so it has none.
var pathTo = map[ledger.State][]ledger.State{
	ledger.Ready:      nil,
	ledger.Submitting: {ledger.Submitting},
	ledger.Submitted:  {ledger.Submitting, ledger.Submitted},
	ledger.Succeeded:  {ledger.Submitting, ledger.Submitted, ledger.Succeeded},
	ledger.Unknown:    {ledger.Submitting, ledger.Unknown},
	ledger.Failed:     {ledger.Submitting, ledger.Unknown, ledger.Failed},
}

// testRecord: fresh payouts are recorded once, with one event each; the same payout again is
// left as it was; other details under a known reference refuse the whole call.
func testRecord(t *testing.T, e Engine) {
	l := e.New(t)
	ctx := context.Background()
	ps := seed(t, l, "r1", 3)
	got := mustGet(t, l, ps[1].Ref)
	if got.State != ledger.Ready || got.RunID != "r1" || got.Line != 3 || !got.SameDetails(ps[1]) || got.CreatedAt.IsZero() {
		t.Errorf("recorded payout %+v", got)
	}
	if evs := mustEvents(t, l, ps[1].Ref); len(evs) != 1 || evs[0].To != ledger.Ready || evs[0].RunID != "r1" {
		t.Errorf("events of a recorded payout %+v, want one, to READY", evs)
	}
	found, err := l.Lookup(ctx, []string{ps[0].Ref, "nope", ps[2].Ref}, ledger.WholePayouts)
	if err != nil || len(found) != 2 || found[ps[2].Ref].Ref != ps[2].Ref {
		t.Errorf("lookup: %v %v, want the two recorded", found, err)
	}
	addRun(t, l, "r2", 1)
	same := ps[0]
	same.Line = 9
	must(t, l.Record(ctx, "r2", []ledger.RunRow{rowOf(same)}, []ledger.Payout{same}))
	if p := mustGet(t, l, same.Ref); p.RunID != "r1" || p.Line != 2 || len(mustEvents(t, l, same.Ref)) != 1 {
		t.Errorf("recorded again: %+v", p)
	}
	addRun(t, l, "r3", 2)
	other := ps[2]
	other.Amount = decimal.RequireFromString("10.01")
	fresh := payout("r3-new", "5.00", 2)
	err = l.Record(ctx, "r3", []ledger.RunRow{rowOf(fresh), rowOf(other)}, []ledger.Payout{fresh, other})
	if !errors.Is(err, ledger.ErrStateConflict) || !strings.Contains(err.Error(), "payout "+other.Ref+":") {
		t.Fatalf("other details under %s: %v, want a conflict naming it", other.Ref, err)
	}
	if _, err := l.Get(ctx, fresh.Ref); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("a payout of the refused call: %v, want ErrNotFound", err)
	}
	if err := l.Record(ctx, "no-such-run", nil, nil); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("record in an unknown run: %v, want ErrNotFound", err)
	}
}

// testLegalMoves applies each move of the table to a payout in its From state.
func testLegalMoves(t *testing.T, e Engine) {
	l := e.New(t)
	ctx := context.Background()
	ps := seed(t, l, "r1", len(states)*len(states))
	i := 0
	for _, from := range states {
		path, reachable := pathTo[from]
		for _, to := range states {
			if !ledger.Allowed(from, to) {
				continue
			}
			if !reachable {
				t.Fatalf("%s -> %s is in the table but %s cannot be reached", from, to, from)
			}
			ref := ps[i].Ref
			i++
			moveTo(t, l, ref, path...)
			before := len(mustEvents(t, l, ref))
			if err := l.Apply(ctx, ledger.Change{Ref: ref, From: from, To: to, Detail: "the move"}); err != nil {
				t.Errorf("%s -> %s: %v", from, to, err)
				continue
			}
			evs := mustEvents(t, l, ref)
			if p := mustGet(t, l, ref); p.State != to || len(evs) != before+1 || evs[len(evs)-1].From != from || evs[len(evs)-1].To != to {
				t.Errorf("%s -> %s: state %s, events %+v", from, to, p.State, evs)
			}
		}
	}
	if i < 15 {
		t.Errorf("only %d legal moves applied: is the table that short?", i)
	}
	intact(t, l)
}

// testIllegalMoves: every pair of states that is not in the table is refused with
// ErrIllegalMove, from a payout in that From state, and leaves the payout and its trail as they
// were.
func testIllegalMoves(t *testing.T, e Engine) {
	l := e.New(t)
	ctx := context.Background()
	ps := seed(t, l, "r1", len(states))
	refused := 0
	for i, from := range states {
		ref := ps[i].Ref
		moveTo(t, l, ref, pathTo[from]...) // REJECTED: a READY payout; the table is checked first
		was, events := mustGet(t, l, ref), len(mustEvents(t, l, ref))
		for _, to := range states {
			if ledger.Allowed(from, to) {
				continue
			}
			refused++
			err := l.Apply(ctx, ledger.Change{Ref: ref, From: from, To: to})
			if move := fmt.Sprintf("payout %s: %s -> %s:", ref, from, to); !errors.Is(err, ledger.ErrIllegalMove) || !strings.Contains(err.Error(), move) {
				t.Errorf("%s -> %s: %v, want ErrIllegalMove saying %q", from, to, err, move)
			}
		}
		if p := mustGet(t, l, ref); p.State != was.State || len(mustEvents(t, l, ref)) != events {
			t.Errorf("refused moves from %s changed %s: state %s", from, ref, p.State)
		}
	}
	if want := len(states)*len(states) - 15; refused < want {
		t.Errorf("%d moves refused, want at least %d", refused, want)
	}
	intact(t, l)
}

// testStaleFrom: a change whose From is not where the payout stands is refused with
// ErrStateConflict, even when the move itself is in the table; so is one of an unknown payout.
func testStaleFrom(t *testing.T, e Engine) {
	l := e.New(t)
	ctx := context.Background()
	ps := seed(t, l, "r1", 1)
	ref := ps[0].Ref
	moveTo(t, l, ref, ledger.Submitting, ledger.Submitted)
	for _, c := range []ledger.Change{
		{Ref: ref, From: ledger.Ready, To: ledger.Submitting},
		{Ref: ref, From: ledger.Submitting, To: ledger.Submitted},
		{Ref: ref, From: ledger.Unknown, To: ledger.Failed},
	} {
		err := l.Apply(ctx, c)
		want := fmt.Sprintf("payout %s: is %s, expected %s", ref, ledger.Submitted, c.From)
		if !errors.Is(err, ledger.ErrStateConflict) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s -> %s on a SUBMITTED payout: %v, want ErrStateConflict", c.From, c.To, err)
		}
	}
	if err := l.Apply(ctx, ledger.Change{Ref: "nope", From: ledger.Ready, To: ledger.Submitting}); !errors.Is(err, ledger.ErrStateConflict) {
		t.Errorf("an unknown payout: %v, want ErrStateConflict", err)
	}
	if n := len(mustEvents(t, l, ref)); n != 3 {
		t.Errorf("%d events after refused changes, want 3", n)
	}
}

// testRefusedCallIsAtomic: a call with one refused change records none of its changes.
func testRefusedCallIsAtomic(t *testing.T, e Engine) {
	l := e.New(t)
	ctx := context.Background()
	ps := seed(t, l, "r1", 2)
	for _, bad := range []ledger.Change{
		{Ref: ps[1].Ref, From: ledger.Submitted, To: ledger.Succeeded}, // stale From
		{Ref: ps[1].Ref, From: ledger.Ready, To: ledger.Succeeded},     // not a move
	} {
		err := l.Apply(ctx, ledger.Change{Ref: ps[0].Ref, From: ledger.Ready, To: ledger.Submitting}, bad)
		if err == nil {
			t.Fatalf("a call with %s -> %s applied", bad.From, bad.To)
		}
		for _, p := range ps {
			if got := mustGet(t, l, p.Ref); got.State != ledger.Ready || len(mustEvents(t, l, p.Ref)) != 1 {
				t.Errorf("%s after a refused call (%v): %s", p.Ref, err, got.State)
			}
		}
	}
	intact(t, l)
}
