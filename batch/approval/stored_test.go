package approval_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"path/filepath"
	"testing"
	"time"

	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/ledger"
)

// StoredStatement returns only a stored plan statement whose SHA-256 is the digest asked for:
// one edited in the database is not returned, whatever its facts say, and one that purge forgot
// is returned as ledger.PurgedPayload, not as a statement.
func TestStoredStatementIsTheTextItsDigestNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	db, err := ledger.Create(ctx, path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	plan := func(text string) string {
		sum := sha256.Sum256([]byte(text))
		digest := hex.EncodeToString(sum[:])
		if _, err := db.AppendLedgerEvents(ctx, ledger.LedgerEvent{Kind: ledger.EventPlan, Detail: "plan",
			Facts: map[string]string{"plan_sha256": digest, "file_sha256": "aaaa"}, Payload: text}); err != nil {
			t.Fatal(err)
		}
		return digest
	}
	kept := plan("payout-plan v1\nfile-sha256\taaaa\n")
	edited := plan("payout-plan v1\nfile-sha256\tbbbb\n")

	if got, ok, err := approval.StoredStatement(ctx, db, kept); err != nil || !ok || got != "payout-plan v1\nfile-sha256\taaaa\n" {
		t.Fatalf("StoredStatement: %q %t %v", got, ok, err)
	}
	for _, digest := range []string{"", "0000"} {
		if got, ok, err := approval.StoredStatement(ctx, db, digest); err != nil || ok || got != "" {
			t.Errorf("StoredStatement(%q) = %q %t %v; want none", digest, got, ok, err)
		}
	}

	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`UPDATE events SET payload = payload || 'row' WHERE to_state = 'PLAN' AND payload LIKE '%bbbb%'`); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := approval.StoredStatement(ctx, db, edited); err != nil || ok || got != "" {
		t.Fatalf("StoredStatement of an edited statement: %q %t %v; want none", got, ok, err)
	}

	if _, err := db.Purge(ctx, ledger.PurgeRequest{Before: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC),
		MaskName: func(string) string { return "A." }, MaskAccount: func(string) string { return "****" }, Detail: "purge"}); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := approval.StoredStatement(ctx, db, kept); err != nil || ok || got != ledger.PurgedPayload {
		t.Fatalf("StoredStatement after purge: %q %t %v; want %q", got, ok, err, ledger.PurgedPayload)
	}
}
