package ledgertest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/payout/payout/ledger"
)

// testRetries: a refused payout has one retry reference whoever asks, the first candidate no
// payout or retry holds, derived from the first payout however many retries back it is; a retry recorded
// and linked names the payout it replaces.
func testRetries(t *testing.T, e Engine) {
	l := e.New(t)
	ctx := context.Background()
	ps := seed(t, l, "r1", 2)
	old, taken := ps[0].Ref, ps[1].Ref
	var roots []string
	candidate := func(root string, n int) string {
		roots = append(roots, root)
		return []string{"", taken, "NEW-2", "NEW-3", "NEW-4"}[n]
	}
	first, err := l.ClaimRetry(ctx, old, "r1", t0, candidate)
	if err != nil || first.New != "NEW-2" || first.Old != old || first.RunID != "r1" {
		t.Fatalf("claim: %+v, %v; want NEW-2 (candidate 1 is a payout's reference)", first, err)
	}
	if again, err := l.ClaimRetry(ctx, old, "r2", t0, func(string, int) string { return "OTHER" }); err != nil || again != first {
		t.Fatalf("claimed again: %+v, %v; want %+v", again, err, first)
	}
	second, err := l.ClaimRetry(ctx, "NEW-2", "r1", t0, candidate)
	if err != nil || second.New != "NEW-3" {
		t.Fatalf("retry of the retry: %+v, %v; want NEW-3", second, err)
	}
	third, err := l.ClaimRetry(ctx, "NEW-3", "r1", t0, candidate)
	if err != nil || third.New != "NEW-4" {
		t.Fatalf("retry of the retry's retry: %+v, %v; want NEW-4", third, err)
	}
	for _, root := range roots {
		if root != old {
			t.Errorf("candidates derived from %q (all of %q), want %s: a payout that is no retry is its own root, a retry's is the first payout's", root, roots, old)
			break
		}
	}
	if got, err := l.Retries(ctx, ledger.RetryFilter{Old: []string{old}}); err != nil || len(got) != 1 || got[old] != first {
		t.Errorf("retry of %s: %+v %v", old, got, err)
	}
	if got, err := l.Retries(ctx, ledger.RetryFilter{Old: []string{taken}}); err != nil || len(got) != 0 {
		t.Errorf("retry of a payout with none: %+v %v", got, err)
	}
	if got, err := l.Retries(ctx, ledger.RetryFilter{Old: []string{old, "NEW-2", taken}}); err != nil || len(got) != 2 || got["NEW-2"] != second {
		t.Errorf("retries of %s, NEW-2 and %s: %+v %v", old, taken, got, err)
	}
	found, err := l.Retries(ctx, ledger.RetryFilter{New: []string{"NEW-2", "NEW-3", taken}})
	if err != nil || len(found) != 2 || found["NEW-3"].Old != "NEW-2" {
		t.Errorf("retries: %+v, %v", found, err)
	}
	if found, err := l.Retries(ctx, ledger.RetryFilter{New: []string{"NEW-2"}}); err != nil || found["NEW-2"] != first {
		t.Errorf("retry paid under NEW-2: %+v, %v", found, err)
	}
	testLinkRetry(t, l, first)
	intact(t, l)
}

// testLinkRetry records the retry r.New in a run of its own and links it to r.Old, as a run that
// pays a retry file does (batch/outcome.RetryLinked): the payout stays READY, one event in its
// trail names the payout it replaces, and the chain holds its retry_of (intact, by the caller).
func testLinkRetry(t *testing.T, l ledger.Ledger, r ledger.Retry) {
	ctx := context.Background()
	addRun(t, l, "r-retry", 1)
	p := payout(r.New, "10.00", 2)
	must(t, l.Record(ctx, "r-retry", []ledger.RunRow{rowOf(p)}, []ledger.Payout{p}))
	must(t, l.Apply(ctx, ledger.Change{Ref: r.New, From: ledger.Ready, To: ledger.Ready, RunID: "r-retry", RetryOf: r.Old,
		Detail: "a retry of " + r.Old}))
	var linked []string
	for _, ev := range mustEvents(t, l, r.New) {
		if ev.From == ledger.Ready && ev.To == ledger.Ready && ev.RunID == "r-retry" {
			linked = append(linked, ev.Detail)
		}
	}
	if len(linked) != 1 || !strings.HasPrefix(linked[0], "a retry of "+r.Old) {
		t.Errorf("the link's events say %q, want one naming %s", linked, r.Old)
	}
	if got := mustGet(t, l, r.New); got.State != ledger.Ready {
		t.Errorf("%s is %s once linked, want READY", r.New, got.State)
	}
}

// testNameChecks: the bank's name for an account is kept beside its payout, without moving it
// or touching its row; the same check again adds nothing; mismatches are listed.
func testNameChecks(t *testing.T, e Engine) {
	l := e.New(t)
	ctx := context.Background()
	ps := seed(t, l, "r1", 3)
	before, events := mustGet(t, l, ps[1].Ref), len(mustEvents(t, l, ps[1].Ref))
	for range 2 {
		must(t, l.SetNameCheck(ctx, ps[1].Ref, "LIM WEI JIE", ledger.NameMismatch))
	}
	must(t, l.SetNameCheck(ctx, ps[2].Ref, "ALI", ledger.NameMatch))
	if err := l.SetNameCheck(ctx, "nobody", "X", ledger.NameMatch); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("name check of an unknown payout: %v, want ErrNotFound", err)
	}
	if after := mustGet(t, l, ps[1].Ref); fmt.Sprintf("%+v", after) != fmt.Sprintf("%+v", before) || len(mustEvents(t, l, ps[1].Ref)) != events+1 {
		t.Errorf("the name check changed the payout, or was recorded twice: %+v, was %+v", after, before)
	}
	checks, err := l.NameChecks(ctx, ledger.NameFilter{Refs: []string{ps[2].Ref, ps[0].Ref, ps[1].Ref}})
	if err != nil || len(checks) != 2 || checks[0].Ref != ps[1].Ref || checks[0].DisplayName != "LIM WEI JIE" || checks[1].Check != ledger.NameMatch {
		t.Errorf("name checks %+v %v, want those of %s and %s, by reference", checks, err, ps[1].Ref, ps[2].Ref)
	}
	mismatches, err := l.NameChecks(ctx, ledger.NameFilter{Mismatches: true})
	if err != nil || len(mismatches) != 1 || mismatches[0].Ref != ps[1].Ref {
		t.Errorf("mismatches %+v %v, want %s alone", mismatches, err, ps[1].Ref)
	}
	intact(t, l)
}
