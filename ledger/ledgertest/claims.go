package ledgertest

import (
	"context"
	"slices"
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

// testClaims: each process names itself in the payouts it moves to SUBMITTING; while it holds
// the ledger, no other process finds them orphaned (and so never makes them UNKNOWN or sends
// them), and once it is gone the next process finds exactly them, with the rows of processes
// gone earlier and those that name no process.
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
	orphans(t, l, a.Alive, ps[3], ps[4])
	if b, ok := e.Hold(t, other); ok { // engines that let two processes pay at once
		orphans(t, other, b.Alive, ps[3], ps[4])
		b.Release()
	}
	a.Release()
	c := start(t, e, other)
	found := orphans(t, other, c.Alive, ps[0], ps[1], ps[3], ps[4])
	for _, p := range found {
		must(t, other.Apply(ctx, ledger.Change{Ref: p.Ref, From: ledger.Submitting, To: ledger.Unknown, Detail: "its process is gone"}))
	}
	// Looked up and sent again by c, the payout names c.
	must(t, other.Apply(ctx, ledger.Change{Ref: ps[0].Ref, From: ledger.Unknown, To: ledger.Ready, Detail: "never created"}))
	claim(t, other, c.Claimant, ps[0])
	orphans(t, other, c.Alive)
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

// orphans checks that the orphaned payouts alive finds are exactly want, and returns them.
func orphans(tb testing.TB, l ledger.Ledger, alive ledger.Liveness, want ...ledger.Payout) []ledger.Payout {
	tb.Helper()
	found, err := l.Orphaned(context.Background(), alive)
	must(tb, err)
	var got, refs []string
	for _, p := range found {
		got = append(got, p.Ref)
		if p.State != ledger.Submitting {
			tb.Errorf("orphan %s is %s, want SUBMITTING", p.Ref, p.State)
		}
	}
	for _, p := range want {
		refs = append(refs, p.Ref)
	}
	slices.Sort(got)
	if !slices.Equal(got, refs) {
		tb.Errorf("orphaned payouts %v, want %v", got, refs)
	}
	return found
}
