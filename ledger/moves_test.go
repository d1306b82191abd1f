package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/payout/payout/ledger"
)

var allStates = []ledger.State{ledger.Ready, ledger.Submitting, ledger.Submitted, ledger.Succeeded,
	ledger.Failed, ledger.Unknown, ledger.Rejected}

// legalMoves is the state machine as this test reads it, written out apart from the ledger's own
// table so that a move added to or dropped from the ledger without a reason here fails.
var legalMoves = map[[2]ledger.State]string{
	{ledger.Ready, ledger.Ready}:          "a note on a payout not sent yet",
	{ledger.Ready, ledger.Submitting}:     "the intent, recorded before the POST",
	{ledger.Submitting, ledger.Submitted}: "the service accepted it",
	{ledger.Submitting, ledger.Unknown}:   "no usable answer, or the process died: look it up",
	{ledger.Submitting, ledger.Ready}:     "the request certainly never reached the service",
	{ledger.Unknown, ledger.Unknown}:      "a lookup that proves nothing yet",
	{ledger.Unknown, ledger.Submitted}:    "a lookup or a signed callback found it",
	{ledger.Unknown, ledger.Ready}:        "never created: grace passed, or released after a lookup",
	{ledger.Unknown, ledger.Failed}:       "a refusal confirmed by a lookup",
	{ledger.Submitted, ledger.Submitted}:  "not final yet at the service",
	{ledger.Submitted, ledger.Succeeded}:  "the service's final word",
	{ledger.Submitted, ledger.Failed}:     "the service's final word",
	{ledger.Failed, ledger.Failed}:        "a note on a final payout",
	{ledger.Failed, ledger.Submitted}:     "a refusal the service did not keep to",
	{ledger.Succeeded, ledger.Succeeded}:  "a note on a final payout",
}

// pathTo is a way of legal moves from READY to s; nil for READY itself.
func pathTo(s ledger.State) []ledger.State {
	switch s {
	case ledger.Ready:
		return nil
	case ledger.Submitting:
		return []ledger.State{ledger.Submitting}
	case ledger.Submitted, ledger.Unknown:
		return []ledger.State{ledger.Submitting, s}
	case ledger.Succeeded, ledger.Failed:
		return []ledger.State{ledger.Submitting, ledger.Submitted, s}
	}
	return nil
}

func TestEveryMoveOfTheTableIsAllowedAndNoOther(t *testing.T) {
	t.Parallel()
	for _, from := range allStates {
		for _, to := range allStates {
			_, want := legalMoves[[2]ledger.State{from, to}]
			if got := ledger.Allowed(from, to); got != want {
				t.Errorf("Allowed(%s, %s) = %v, want %v", from, to, got, want)
			}
		}
	}
}

func TestLedgerRefusesEveryMoveNotInTheTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := mustOpen(t)
	ps := seed(t, db, "moves", len(allStates)*len(allStates))
	i := 0
	for _, from := range allStates {
		for _, to := range allStates {
			ref := ps[i].Ref
			i++
			t.Run(fmt.Sprintf("%s to %s", from, to), func(t *testing.T) {
				if from == ledger.Rejected {
					// Rejected rows are written as such when their file is read; Apply checks
					// the move before it looks at the row.
					ref = "not-recorded"
				}
				at := ledger.Ready
				for _, next := range pathTo(from) {
					if err := db.Apply(ctx, ledger.Change{Ref: ref, From: at, To: next, Detail: "to the state under test"}); err != nil {
						t.Fatalf("%s -> %s on the way to %s: %v", at, next, from, err)
					}
					at = next
				}
				before := len(mustEvents(t, db, ref))
				err := db.Apply(ctx, ledger.Change{Ref: ref, From: from, To: to, Detail: "the move under test"})
				if _, legal := legalMoves[[2]ledger.State{from, to}]; legal {
					if err != nil {
						t.Fatalf("a legal move was refused: %v", err)
					}
					if p := mustGet(t, db, ref); p.State != to {
						t.Errorf("state %s after the move, want %s", p.State, to)
					}
					return
				}
				if move := fmt.Sprintf("payout %s: %s -> %s:", ref, from, to); !errors.Is(err, ledger.ErrIllegalMove) || !strings.Contains(err.Error(), move) {
					t.Fatalf("err %v, want ErrIllegalMove saying %q", err, move)
				}
				if from != ledger.Rejected {
					if p := mustGet(t, db, ref); p.State != from {
						t.Errorf("state %s after a refused move, want %s", p.State, from)
					}
					if n := len(mustEvents(t, db, ref)); n != before {
						t.Errorf("a refused move left an event: %d, had %d", n, before)
					}
				}
			})
		}
	}
}

// A call with one illegal change among legal ones records none of them: a paid payout is never
// made payable again by a change that rides along with others.
func TestACallWithOneIllegalMoveRecordsNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := mustOpen(t)
	ps := seed(t, db, "paid", 2)
	for _, c := range []ledger.Change{
		{Ref: ps[0].Ref, From: ledger.Ready, To: ledger.Submitting},
		{Ref: ps[0].Ref, From: ledger.Submitting, To: ledger.Submitted},
		{Ref: ps[0].Ref, From: ledger.Submitted, To: ledger.Succeeded},
	} {
		if err := db.Apply(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	err := db.Apply(ctx,
		ledger.Change{Ref: ps[1].Ref, From: ledger.Ready, To: ledger.Submitting},
		ledger.Change{Ref: ps[0].Ref, From: ledger.Succeeded, To: ledger.Ready})
	if !errors.Is(err, ledger.ErrIllegalMove) {
		t.Fatalf("SUCCEEDED -> READY in a call: err %v", err)
	}
	if p := mustGet(t, db, ps[0].Ref); p.State != ledger.Succeeded {
		t.Errorf("the paid payout is %s", p.State)
	}
	if p := mustGet(t, db, ps[1].Ref); p.State != ledger.Ready {
		t.Errorf("the legal change of the refused call was recorded: %s", p.State)
	}
}
