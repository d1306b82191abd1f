package ledger_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/payout/payout/ledger"
)

func runIDs(runs []ledger.Run) []string {
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	return ids
}

func TestBoundedRunQueries(t *testing.T) {
	t.Parallel()
	db, _ := mustOpen(t)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// Added out of order: the queries order by start.
	for _, i := range []int{3, 0, 4, 1, 2, 5} {
		status, sha := ledger.RunFinished, "sha-a"
		if i%2 == 1 {
			status, sha = ledger.RunRunning, "sha-b"
		}
		if err := db.AddRun(ctx, ledger.Run{ID: fmt.Sprintf("run-%d", i), Kind: "run", FileSHA256: sha,
			StartedAt: t0.Add(time.Duration(i) * time.Hour), Status: status}); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, runs []ledger.Run, err error, want ...string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := runIDs(runs); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", what, got, want)
		}
	}
	for _, c := range []struct {
		f    ledger.RunFilter
		want []string
	}{
		{ledger.RunFilter{}, []string{"run-0", "run-1", "run-2", "run-3", "run-4", "run-5"}},
		{ledger.RunFilter{Latest: 2}, []string{"run-4", "run-5"}},
		{ledger.RunFilter{Latest: 10}, []string{"run-0", "run-1", "run-2", "run-3", "run-4", "run-5"}},
		{ledger.RunFilter{Status: "running"}, []string{"run-1", "run-3", "run-5"}},
		{ledger.RunFilter{FileSHA256: "sha-a"}, []string{"run-0", "run-2", "run-4"}},
		{ledger.RunFilter{Since: t0.Add(4 * time.Hour)}, []string{"run-4", "run-5"}},
		{ledger.RunFilter{Status: "running", Latest: 2}, []string{"run-5"}},
		{ledger.RunFilter{FileSHA256: "sha-b", Since: t0.Add(2 * time.Hour)}, []string{"run-3", "run-5"}},
		{ledger.RunFilter{Source: "nothing"}, nil},
		{ledger.RunFilter{Listing: []string{}}, nil},
	} {
		runs, err := db.FindRuns(ctx, c.f)
		check(fmt.Sprintf("FindRuns %+v", c.f), runs, err, c.want...)
	}
}

// TestWalkPayoutsLatest: with Latest, WalkPayouts gives at most that many payouts of the set,
// latest first, whatever its page.
func TestWalkPayoutsLatest(t *testing.T) {
	t.Parallel()
	db, _ := mustOpen(t)
	ctx := context.Background()
	seed(t, db, "old", 5)
	seed(t, db, "new", 5)
	for _, ref := range []string{"old-ref-1", "old-ref-3", "new-ref-0", "new-ref-2"} {
		for _, c := range [][2]ledger.State{{ledger.Ready, ledger.Submitting}, {ledger.Submitting, ledger.Submitted}} {
			if err := db.Apply(ctx, ledger.Change{Ref: ref, From: c[0], To: c[1]}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.Apply(ctx, ledger.Change{Ref: "new-ref-2", From: ledger.Submitted, To: ledger.Succeeded}); err != nil {
		t.Fatal(err)
	}
	done := []ledger.State{ledger.Submitted, ledger.Succeeded}
	for _, c := range []struct {
		latest int
		want   []string
	}{
		{3, []string{"new-ref-2", "new-ref-0", "old-ref-3"}},
		{10, []string{"new-ref-2", "new-ref-0", "old-ref-3", "old-ref-1"}},
	} {
		for _, page := range []int{1, 2, 50} {
			got := pagedPayouts(t, db, ledger.Filter{States: done, Latest: c.latest}, page)
			if !slices.Equal(got, c.want) {
				t.Errorf("WalkPayouts(Latest %d) in pages of %d: %v, want %v (latest run first, then by line from the last)", c.latest, page, got, c.want)
			}
		}
	}
}

func TestRefusedSince(t *testing.T) {
	t.Parallel()
	db, _ := mustOpen(t) // its clock moves a millisecond a reading
	ctx := context.Background()
	seed(t, db, "r1", 4)
	fail := func(ref, invoice string) {
		t.Helper()
		changes := []ledger.Change{{Ref: ref, From: ledger.Ready, To: ledger.Submitting}}
		if invoice != "" {
			changes = append(changes, ledger.Change{Ref: ref, From: ledger.Submitting, To: ledger.Submitted, InvoiceNo: invoice},
				ledger.Change{Ref: ref, From: ledger.Submitted, To: ledger.Failed})
		} else {
			changes = append(changes, ledger.Change{Ref: ref, From: ledger.Submitting, To: ledger.Unknown, Error: "refused"},
				ledger.Change{Ref: ref, From: ledger.Unknown, To: ledger.Failed})
		}
		if err := db.Apply(ctx, changes...); err != nil {
			t.Fatal(err)
		}
	}
	fail("r1-ref-0", "")
	cut := mustGet(t, db, "r1-ref-0").UpdatedAt.Add(time.Nanosecond)
	fail("r1-ref-1", "")
	fail("r1-ref-2", "POI-2") // failed at the service: it has an invoice number
	if got := pagedPayouts(t, db, ledger.Filter{RefusedSince: cut}, 2); !slices.Equal(got, []string{"r1-ref-1"}) {
		t.Errorf("refused since: %v, want only r1-ref-1 (r1-ref-0 is older, r1-ref-2 has an invoice)", got)
	}
}
