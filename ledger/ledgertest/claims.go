package ledgertest

import (
	"context"
	"maps"
	"testing"

	"github.com/payout/payout/ledger"
)

// Holder is one paying process's hold on a ledger, as Engine.Hold starts it.
type Holder struct {
	// Claimant names the process in the payouts it claims (ledger.Change.ClaimedBy).
	Claimant string
	// Alive is how the process tells whether another claimant still runs.
	Alive ledger.Liveness
	// Release ends the hold as the process's death would.
	Release func()
}

// testClaims: each process names itself in the payouts it moves to SUBMITTING, which every handle
// lists with that name; while a process holds the ledger, every other process's hold tells it
// runs, and once it is gone the next process's hold tells it is gone, as it does of processes
// gone earlier. A start recovers the SUBMITTING payouts of gone processes (and those that name
// none) by these two answers, so a live process's are never made UNKNOWN or sent again.
func testClaims(t *testing.T, e Engine) {
	if e.Hold == nil || e.Again == nil {
		t.Skip("the engine holds no ledger for a process, or opens no second handle")
	}
	ctx := context.Background()
	l := e.New(t)
	other := e.Again(t, l)
	ps := seed(t, l, "r1", 5)
	dead := start(t, e, l)
	claim(t, l, dead.Claimant, ps[4])
	dead.Release()
	claim(t, l, "", ps[3]) // claimed before claims named their process
	a := start(t, e, l)
	claim(t, l, a.Claimant, ps[0], ps[1])
	got, err := other.Get(ctx, ps[0].Ref)
	must(t, err)
	if got.ClaimedBy != a.Claimant {
		t.Errorf("%s: ClaimedBy %q, want %q", ps[0].Ref, got.ClaimedBy, a.Claimant)
	}
	claimed := map[string]string{ps[0].Ref: a.Claimant, ps[1].Ref: a.Claimant, ps[3].Ref: "", ps[4].Ref: dead.Claimant}
	submitting(t, l, claimed)
	submitting(t, other, claimed)
	running(t, a, map[string]bool{a.Claimant: true, dead.Claimant: false})
	if b, ok := e.Hold(t, other); ok { // engines that let two processes pay at once
		running(t, b, map[string]bool{a.Claimant: true, dead.Claimant: false, b.Claimant: true})
		b.Release()
	}
	a.Release()
	c := start(t, e, other)
	running(t, c, map[string]bool{a.Claimant: false, dead.Claimant: false, c.Claimant: true})
	for ref := range claimed {
		must(t, other.Apply(ctx, ledger.Change{Ref: ref, From: ledger.Submitting, To: ledger.Unknown, Detail: "its process is gone"}))
	}
	// Looked up and sent again by c, the payout names c.
	must(t, other.Apply(ctx, ledger.Change{Ref: ps[0].Ref, From: ledger.Unknown, To: ledger.Ready, Detail: "never created"}))
	claim(t, other, c.Claimant, ps[0])
	submitting(t, l, map[string]string{ps[0].Ref: c.Claimant})
	intact(t, l)
}

// start holds the ledger for a new process, which must be able to start.
func start(tb testing.TB, e Engine, l ledger.Ledger) Holder {
	tb.Helper()
	h, ok := e.Hold(tb, l)
	if !ok {
		tb.Fatal("no process could hold the ledger while no other one did")
	}
	return h
}

// claim moves ps from READY to SUBMITTING in the name of claimant.
func claim(tb testing.TB, l ledger.Ledger, claimant string, ps ...ledger.Payout) {
	tb.Helper()
	for _, p := range ps {
		must(tb, l.Apply(context.Background(), ledger.Change{Ref: p.Ref, From: ledger.Ready, To: ledger.Submitting,
			ClaimedBy: claimant, Detail: "sending"}))
	}
}

// submitting checks that the SUBMITTING payouts l lists are exactly want's, each naming the
// claimant want gives it.
func submitting(tb testing.TB, l ledger.Ledger, want map[string]string) {
	tb.Helper()
	found := Payouts(tb, l, ledger.Filter{States: []ledger.State{ledger.Submitting}})
	got := make(map[string]string, len(found))
	for _, p := range found {
		got[p.Ref] = p.ClaimedBy
	}
	if !maps.Equal(got, want) {
		tb.Errorf("SUBMITTING payouts by claimant %q, want %q", got, want)
	}
}

// running checks what h's process is told of each claimant of want: whether it still runs.
func running(tb testing.TB, h Holder, want map[string]bool) {
	tb.Helper()
	for claimant, runs := range want {
		alive, err := h.Alive.Alive(context.Background(), claimant)
		must(tb, err)
		if alive != runs {
			tb.Errorf("%s is told that %s runs: %v, want %v", h.Claimant, claimant, alive, runs)
		}
	}
}
