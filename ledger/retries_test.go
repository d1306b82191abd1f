package ledger_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/payout/payout/ledger"
)

// A payout has one retry whoever asks, under the first candidate no payout or retry holds; a
// retry of a retry leads back to the first payout.
func TestClaimRetryIsOnePerPayoutAndSkipsTakenReferences(t *testing.T) {
	t.Parallel()
	db, _ := mustOpen(t)
	ctx := context.Background()
	ps := seed(t, db, "r1", 2)
	old, taken := ps[0].Ref, ps[1].Ref
	var roots []string
	candidate := func(root string, n int) string {
		roots = append(roots, root)
		return []string{"", taken, "NEW-2", "NEW-3"}[n]
	}
	first, err := db.ClaimRetry(ctx, old, "r1", time.Now(), candidate)
	if err != nil || first.New != "NEW-2" || first.Old != old {
		t.Fatalf("claim: %+v, %v; want NEW-2 (candidate 1 is a payout's reference)", first, err)
	}
	again, err := db.ClaimRetry(ctx, old, "r2", time.Now(), func(string, int) string { return "OTHER" })
	if err != nil || again != first {
		t.Fatalf("claimed again: %+v, %v; want %+v", again, err, first)
	}
	second, err := db.ClaimRetry(ctx, "NEW-2", "r1", time.Now(), candidate)
	if err != nil || second.New != "NEW-3" {
		t.Fatalf("retry of the retry: %+v, %v; want NEW-3", second, err)
	}
	if slices.ContainsFunc(roots, func(r string) bool { return r != old }) {
		t.Errorf("candidates derived from %q, want each from %s", roots, old)
	}
	if got, err := db.Retries(ctx, ledger.RetryFilter{Old: []string{old}}); err != nil || got[old] != first {
		t.Errorf("retry for %s: %+v %v", old, got, err)
	}
	if _, err := db.Retries(ctx, ledger.RetryFilter{New: []string{"NEW-2"}, Old: []string{old}}); err == nil {
		t.Error("retries named by both references: no error")
	}
	// NEW-2 recorded and linked: its retry_of names the payout it pays again.
	if err := db.AddRun(ctx, ledger.Run{ID: "r2", Kind: ledger.KindRun, StartedAt: time.Now(), Status: ledger.RunRunning}); err != nil {
		t.Fatal(err)
	}
	retry := payout("NEW-2", "10.00", 2)
	if err := db.Record(ctx, "r2", []ledger.RunRow{rowOf(retry)}, []ledger.Payout{retry}); err != nil {
		t.Fatal(err)
	}
	if err := db.Apply(ctx, ledger.Change{Ref: "NEW-2", From: ledger.Ready, To: ledger.Ready, RunID: "r2", RetryOf: old, Detail: "linked"}); err != nil {
		t.Fatal(err)
	}
	if got, err := db.RetryOf(ctx, "NEW-2"); err != nil || got != old {
		t.Errorf("NEW-2 is a retry of %q (%v), want %s", got, err, old)
	}
	found, err := db.Retries(ctx, ledger.RetryFilter{New: []string{"NEW-2", "NEW-3", taken}})
	if err != nil || len(found) != 2 || found["NEW-3"].Old != "NEW-2" {
		t.Errorf("retries: %+v, %v", found, err)
	}
}
