package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/payout/payout/ledger"
)

// RecentPayees holds the account and bank of every payout recorded since the time that may pay,
// and gives up (nil) past its limit.
func TestRecentPayeesHoldsWhatMayRepeat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := mustOpen(t)
	ps := seed(t, db, "r", 3) // account 0123456789 at provider 7, recorded at the clock's time
	if err := db.Apply(ctx, walk(ps[2].Ref, ledger.Submitting, ledger.Unknown, ledger.Failed)...); err != nil {
		t.Fatal(err)
	}
	since := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	payee := func(account string, provider int64) ledger.PaidAccount {
		return ledger.PaidAccount{Digits: ledger.AccountDigits(account), ProviderID: provider}
	}
	recent, err := db.RecentPayees(ctx, since, 3)
	if err != nil || recent == nil {
		t.Fatalf("three payouts, limit 3: %v, %v", recent, err)
	}
	paid, otherBank, otherAccount := payee("0123456789", 7), payee("0123456789", 8), payee("999", 7)
	if !recent[paid] || recent[otherBank] || recent[otherAccount] || len(recent) != 1 {
		t.Errorf("holds the account and bank paid: %v, another bank: %v, another account: %v, of %d; want true, false, false, of 1",
			recent[paid], recent[otherBank], recent[otherAccount], len(recent))
	}
	if recent, err := db.RecentPayees(ctx, since, 2); err != nil || recent != nil {
		t.Errorf("three payouts, limit 2: %v, %v; want nil: too many to hold", recent, err)
	}
	if recent, err := db.RecentPayees(ctx, since.Add(48*time.Hour), 3); err != nil || recent == nil || recent[paid] {
		t.Errorf("nothing recorded since: %v, %v; want an empty set", recent, err)
	}

	// A payout that failed never pays, so it is no repeat's earlier payout.
	for _, p := range ps[:2] {
		if err := db.Apply(ctx, walk(p.Ref, ledger.Submitting, ledger.Unknown, ledger.Failed)...); err != nil {
			t.Fatal(err)
		}
	}
	if recent, err := db.RecentPayees(ctx, since, 3); err != nil || recent == nil || recent[paid] {
		t.Errorf("every payout failed: %v, %v; want no payee kept", recent, err)
	}
}
