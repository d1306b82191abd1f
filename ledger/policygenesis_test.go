package ledger_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/payout/payout/internal/pgtest"
	"github.com/payout/payout/ledger"
)

// olderLedger makes a ledger as the version before the policy's genesis did (schema 14), with
// the policy events it wrote: its init's (2 signers) and a lowering to 1 that names its signers
// and keeps no signature.
func olderLedger(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	raw, err := sql.Open("sqlite", path)
	must(t, err)
	defer raw.Close()
	names, err := filepath.Glob(filepath.Join("migrations", "00*.sql"))
	must(t, err)
	for _, name := range names {
		if name >= filepath.Join("migrations", "0015") {
			break
		}
		body, err := os.ReadFile(name)
		must(t, err)
		_, err = raw.Exec(string(body))
		must(t, err)
	}
	_, err = raw.Exec(`PRAGMA user_version = 14`)
	must(t, err)
	prev := ""
	for i, facts := range []string{`{"approvals":"2","was":"0"}`, `{"approvals":"1","signed_by":"alice, bob","was":"2"}`} {
		e := ledger.ChainEvent{ID: int64(i + 1), At: "2026-01-0" + strconv.Itoa(i+1) + "T00:00:00.000000000Z", To: ledger.EventPolicy,
			Detail: "approval policy", Actor: "svc@host", Version: "v0", Facts: facts, PrevHash: prev}
		e.Hash = ledger.HashEvent(e)
		prev = e.Hash
		_, err := raw.Exec(`INSERT INTO events (id, ref, run_id, at, from_state, to_state, detail, payload, actor, version, facts, personal, prev_hash, hash)
			VALUES ($1, '', '', $2, '', $3, $4, '', $5, $6, $7, '', $8, $9)`, e.ID, e.At, e.To, e.Detail, e.Actor, e.Version, e.Facts, e.PrevHash, e.Hash)
		must(t, err)
	}
	return path
}

// A ledger made by an earlier version, whose first policy event was not a genesis and whose
// lowering keeps only its signers' names, is upgraded with the genesis recording the policy it
// held: it keeps paying on that policy, the chain verifies, and a reader checks the lowerings
// from the genesis on only. A second upgrade writes no second genesis.
func TestUpgradeWritesThePolicysGenesis(t *testing.T) {
	t.Parallel()
	path := olderLedger(t)
	db := openAt(t, path)
	ctx := context.Background()
	pol, err := db.ApprovalPolicy(ctx)
	if err != nil || pol.Approvals != 1 || pol.Event.ID != 3 || pol.Event.Facts["genesis"] != "upgrade" || pol.Event.Facts["was"] != "1" {
		t.Fatalf("the upgraded ledger's policy: %+v %v, want 1 signer set by the upgrade's genesis, event 3", pol, err)
	}
	if len(pol.Changes) != 1 || pol.Changes[0].Event.ID != 3 {
		t.Errorf("changes a reader checks: %+v, want the genesis alone", pol.Changes)
	}
	wantIntact(t, verify(t, db))
	must(t, db.Close())
	db = openAt(t, path)
	if again, err := db.ApprovalPolicy(ctx); err != nil || again.Event.ID != 3 {
		t.Errorf("opened again: %+v %v, want the same genesis", again, err)
	}
}

// A ledger whose policy events were all deleted (its owner can drop the guard) has lost its
// policy: it is refused (ErrPolicyLost), never read as asking no signature; so is a genesis
// written by hand after the real one.
func TestALedgerWithoutItsPolicysGenesisIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, path := mustOpen(t)
	must(t, db.Close())
	raw, err := sql.Open("sqlite", path)
	must(t, err)
	for _, s := range []string{`DROP TRIGGER events_no_delete`, `DELETE FROM events WHERE to_state = 'POLICY'`} {
		_, err := raw.Exec(s)
		must(t, err)
	}
	must(t, raw.Close())
	db = openAt(t, path)
	if pol, err := db.ApprovalPolicy(ctx); !errors.Is(err, ledger.ErrPolicyLost) {
		t.Fatalf("policy of a ledger without its genesis: %+v %v, want ErrPolicyLost", pol, err)
	}
	db2, _ := mustOpen(t)
	pol, err := db2.ApprovalPolicy(ctx)
	must(t, err)
	if _, err := db2.AppendLedgerEvents(ctx, ledger.LedgerEvent{Kind: ledger.EventPolicy, Facts: map[string]string{"approvals": "0", "was": "0", "genesis": "upgrade", ledger.FactReplaces: ledger.PolicyRef(pol.Event)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db2.ApprovalPolicy(ctx); err == nil {
		t.Errorf("a second genesis was taken for the policy")
	}
}

// A PostgreSQL ledger made before the policy's genesis (its migrations up to 0004) is upgraded
// as a file is: the genesis records the policy it held, and the chain verifies.
func TestUpgradeWritesThePolicysGenesisOnPostgres(t *testing.T) {
	t.Parallel()
	where := pgtest.New(t)
	raw, err := sql.Open("pgx", where)
	must(t, err)
	defer raw.Close()
	_, err = raw.Exec(`CREATE TABLE ledger_migrations (version integer PRIMARY KEY, name text NOT NULL, schema_version integer NOT NULL, applied_at text NOT NULL)`)
	must(t, err)
	names, err := filepath.Glob(filepath.Join("migrations", "postgres", "000[1-4]_*.sql"))
	must(t, err)
	for i, name := range names {
		body, err := os.ReadFile(name)
		must(t, err)
		_, err = raw.Exec(string(body))
		must(t, err)
		_, err = raw.Exec(`INSERT INTO ledger_migrations VALUES ($1, $2, 14, '2026-01-01T00:00:00.000000000Z')`, i+1, "migrations/postgres/"+filepath.Base(name))
		must(t, err)
	}
	e := ledger.ChainEvent{ID: 1, At: "2026-01-01T00:00:00.000000000Z", To: ledger.EventPolicy, Detail: "approval policy: 2 signers, set at init",
		Actor: "svc@host", Version: "v0", Facts: `{"approvals":"2","was":"0"}`}
	e.Hash = ledger.HashEvent(e)
	_, err = raw.Exec(`INSERT INTO events (id, ref, run_id, at, from_state, to_state, detail, payload, actor, version, facts, personal, prev_hash, hash)
		VALUES ($1, '', '', $2, '', $3, $4, '', $5, $6, $7, '', '', $8)`, e.ID, e.At, e.To, e.Detail, e.Actor, e.Version, e.Facts, e.Hash)
	must(t, err)
	db := openAt(t, where)
	ctx := context.Background()
	pol, err := db.ApprovalPolicy(ctx)
	if err != nil || pol.Approvals != 2 || pol.Event.ID != 2 || pol.Event.Facts["genesis"] != "upgrade" {
		t.Fatalf("the upgraded PostgreSQL ledger's policy: %+v %v, want 2 signers set by the upgrade's genesis, event 2", pol, err)
	}
	if v, err := db.SchemaVersion(ctx); err != nil || v != ledger.LatestMigration() {
		t.Errorf("schema version %d (%v), want %d", v, err, ledger.LatestMigration())
	}
	wantIntact(t, verify(t, db))
}
