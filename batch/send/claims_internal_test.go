package send

import (
	"context"
	"slices"
	"testing"

	"github.com/payout/payout/ledger"
)

// submittingOnly is a ledger that holds ps and answers a walk of the SUBMITTING payouts alone.
type submittingOnly struct {
	Ledger
	ps []ledger.Payout
}

func (s submittingOnly) WalkPayouts(_ context.Context, set ledger.Filter, _ int, fn func(ledger.Payout) error) error {
	if !slices.Equal(set.States, []ledger.State{ledger.Submitting}) || set.Latest != 0 {
		panic("a walk of other payouts than the SUBMITTING ones")
	}
	for _, p := range s.ps {
		if err := fn(p); err != nil {
			return err
		}
	}
	return nil
}

// askedLiveness knows which claimants run, and counts how often it is asked of each.
type askedLiveness struct {
	runs  map[string]bool
	asked map[string]int
}

func (a askedLiveness) Alive(_ context.Context, claimant string) (bool, error) {
	a.asked[claimant]++
	return a.runs[claimant], nil
}

// TestOrphanedAreTheClaimsOfGoneProcessesAndUnnamedOnes: of the SUBMITTING payouts, those of a
// process that is gone and those that name no process are orphaned, even when the liveness
// calls the unnamed claimant alive (as a PostgreSQL hold calls every claimant it cannot tell
// about); a live process's are not. Each claimant is asked about once.
func TestOrphanedAreTheClaimsOfGoneProcessesAndUnnamedOnes(t *testing.T) {
	claimed := func(ref, claimant string) ledger.Payout {
		return ledger.Payout{Ref: ref, State: ledger.Submitting, ClaimedBy: claimant}
	}
	db := submittingOnly{ps: []ledger.Payout{claimed("L1", "live"), claimed("G1", "gone"), claimed("U1", ""),
		claimed("L2", "live"), claimed("G2", "gone"), claimed("U2", "")}}
	alive := askedLiveness{runs: map[string]bool{"live": true, "": true}, asked: make(map[string]int)}
	found, err := orphaned(context.Background(), db, alive)
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, p := range found {
		refs = append(refs, p.Ref)
	}
	if want := []string{"G1", "U1", "G2", "U2"}; !slices.Equal(refs, want) {
		t.Errorf("orphaned %v, want %v", refs, want)
	}
	for claimant, n := range alive.asked {
		if n != 1 {
			t.Errorf("asked %d times whether %q runs, want once", n, claimant)
		}
	}
	if len(alive.asked) != 3 {
		t.Errorf("asked of %v, want of the three claimants", alive.asked)
	}
}
