package ledger_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/ledger"
)

// StrayPayouts names the payouts a run may send whose row disagrees with their own events: set
// back by a plain UPDATE, or moved by an event the state machine does not allow; payouts that
// moved as the program moves them are not named.
func TestStrayPayoutsAreThoseWhoseRowsDisagreeWithTheirEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, path := mustOpen(t)
	ps := seed(t, db, "run-1", 3)
	for _, p := range ps {
		if err := db.Apply(ctx, walk(p.Ref, ledger.Submitting, ledger.Submitted, ledger.Succeeded)...); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Apply(ctx, walk("run-1-ref-2", ledger.Submitting, ledger.Unknown)...); err == nil {
		t.Fatal("a paid payout moved back by Apply")
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`UPDATE payouts SET state = 'READY' WHERE ref = 'run-1-ref-0'`); err != nil {
		t.Fatal(err)
	}
	stray, err := db.StrayPayouts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(stray) != 1 || !strings.Contains(stray["run-1-ref-0"], "its row is READY, its latest event leaves it SUCCEEDED") {
		t.Fatalf("stray %v, want run-1-ref-0 named as set back by hand", stray)
	}
}

// VerifyChain names a plan statement edited in the database.
func TestVerifyNamesAnEditedPlanStatement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, path := mustOpen(t)
	text := "payout-plan v1\nfile-sha256\taaaa\n"
	sum := sha256.Sum256([]byte(text))
	digest := hex.EncodeToString(sum[:])
	if _, err := db.AppendLedgerEvents(ctx, ledger.LedgerEvent{Kind: ledger.EventPlan, Detail: "plan",
		Facts: map[string]string{"plan_sha256": digest}, Payload: text}); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`UPDATE events SET payload = payload || 'row' WHERE to_state = 'PLAN'`); err != nil {
		t.Fatal(err)
	}
	rep, err := db.VerifyChain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 || !strings.Contains(rep.Findings[0].String(), "its payload is not the plan statement its plan_sha256 names") {
		t.Fatalf("findings %v, want the edited statement named", rep.Findings)
	}
}

// Purge forgets a plan statement recorded before its cut-off, with the names and accounts it
// lists; the chain still verifies, and the event says the statement was purged.
func TestPurgeForgetsPlanStatements(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := mustOpen(t)
	text := "payout-plan v1\nfile-sha256\taaaa\nrow\t2\t\"R-1\"\t7\t0123456789\t10.00\t\"Ali\"\n"
	sum := sha256.Sum256([]byte(text))
	digest := hex.EncodeToString(sum[:])
	if _, err := db.AppendLedgerEvents(ctx, ledger.LedgerEvent{Kind: ledger.EventPlan, Detail: "plan",
		Facts: map[string]string{"plan_sha256": digest}, Payload: text}); err != nil {
		t.Fatal(err)
	}
	res, err := db.Purge(ctx, ledger.PurgeRequest{Before: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC),
		MaskName: func(string) string { return "A." }, MaskAccount: func(string) string { return "****" }, Detail: "purge"})
	if err != nil || res.Plans != 1 {
		t.Fatalf("purge: %+v, %v; want one plan statement masked", res, err)
	}
	plans, err := db.LedgerEvents(ctx, ledger.EventFilter{Kind: ledger.EventPlan, PlanSHA256: digest})
	if err != nil || len(plans) != 1 || plans[0].Payload != ledger.PurgedPayload {
		t.Fatalf("plan events after purge: %+v, %v; want one, purged", plans, err)
	}
	if rep, err := db.VerifyChain(ctx); err != nil || len(rep.Findings) != 0 {
		t.Fatalf("verify after purge: %v %v", rep.Findings, err)
	}
}
