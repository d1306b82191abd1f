package ledger_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/payout/payout/ledger"
)

// A name check is kept beside the payout: its state, history and update time stay as they were.
func TestNameCheckKeptWithoutTouchingThePayout(t *testing.T) {
	t.Parallel()
	db, _ := mustOpen(t)
	ctx := context.Background()
	ps := seed(t, db, "run1", 600) // more than one IN list's worth
	before := mustGet(t, db, ps[1].Ref)
	events := len(mustEvents(t, db, ps[1].Ref))

	if err := db.SetNameCheck(ctx, ps[1].Ref, "LIM WEI JIE", ledger.NameMismatch); err != nil {
		t.Fatal(err)
	}
	if err := db.SetNameCheck(ctx, ps[599].Ref, "ALI", ledger.NameMatch); err != nil {
		t.Fatal(err)
	}
	if err := db.SetNameCheck(ctx, "nobody", "X", ledger.NameMatch); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("name check of an unknown reference: %v, want ErrNotFound", err)
	}
	// The name has its event in the trail; the payout's row is as it was, its update time too.
	if after := mustGet(t, db, ps[1].Ref); fmt.Sprintf("%+v", after) != fmt.Sprintf("%+v", before) || len(mustEvents(t, db, ps[1].Ref)) != events+1 {
		t.Fatalf("the name check changed the payout: %+v, was %+v", after, before)
	}
	if err := db.SetNameCheck(ctx, ps[1].Ref, "LIM WEI JIE", ledger.NameMismatch); err != nil {
		t.Fatal(err)
	}
	if n := len(mustEvents(t, db, ps[1].Ref)); n != events+1 {
		t.Errorf("the same name check again: %d events, want %d (nothing new)", n, events+1)
	}

	refs := make([]string, len(ps))
	for i, p := range ps {
		refs[i] = p.Ref
	}
	checks, err := db.NameChecks(ctx, ledger.NameFilter{Refs: refs})
	if err != nil {
		t.Fatal(err)
	}
	mismatch := ledger.NameCheck{Ref: ps[1].Ref, Recipient: ps[1].Recipient, DisplayName: "LIM WEI JIE", Check: ledger.NameMismatch}
	want := []ledger.NameCheck{mismatch,
		{Ref: ps[599].Ref, Recipient: ps[599].Recipient, DisplayName: "ALI", Check: ledger.NameMatch}}
	if !slices.Equal(checks, want) {
		t.Fatalf("name checks %+v, want %+v", checks, want)
	}
	for _, f := range []ledger.NameFilter{{Mismatches: true}, {Refs: refs, Mismatches: true}} {
		if mismatches, err := db.NameChecks(ctx, f); err != nil || !slices.Equal(mismatches, []ledger.NameCheck{mismatch}) {
			t.Fatalf("name mismatches (Refs %t): %+v %v", f.Refs != nil, mismatches, err)
		}
	}
	if none, err := db.NameChecks(ctx, ledger.NameFilter{}); err != nil || len(none) != 0 {
		t.Fatalf("name checks of an empty filter: %+v %v, want none", none, err)
	}
}

// A ledger made before the name check gains its columns when opened, its payouts not compared.
func TestNameCheckColumnsAddedToAnOlderLedger(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "old.db")
	schema, err := os.ReadFile("migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	old, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{string(schema), `PRAGMA user_version = 1`,
		`INSERT INTO payouts (ref, run_id, line, recipient, provider_id, bank, account, amount, description, state, created_at, updated_at)
		 VALUES ('OLD-1', 'r0', 2, 'Tan Mei Ling', 1, 'Maybank', '0123', '5.00', '', 'SUCCEEDED', '', '')`} {
		if _, err := old.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	db := openAt(t, path)
	ctx := context.Background()
	if got, err := db.NameChecks(ctx, ledger.NameFilter{Mismatches: true}); err != nil || len(got) != 0 {
		t.Fatalf("name mismatches of an older ledger: %+v, %v", got, err)
	}
	if err := db.SetNameCheck(ctx, "OLD-1", "LIM WEI JIE", ledger.NameMismatch); err != nil {
		t.Fatal(err)
	}
	if got, err := db.NameChecks(ctx, ledger.NameFilter{Mismatches: true}); err != nil || len(got) != 1 || got[0].Recipient != "Tan Mei Ling" {
		t.Fatalf("name mismatches after a check: %+v, %v", got, err)
	}
}
