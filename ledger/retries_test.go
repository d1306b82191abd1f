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
	found, err := db.Retries(ctx, ledger.RetryFilter{New: []string{"NEW-2", "NEW-3", taken}})
	if err != nil || len(found) != 2 || found["NEW-3"].Old != "NEW-2" {
		t.Errorf("retries: %+v, %v", found, err)
	}
}
