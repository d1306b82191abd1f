package main_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/batch/signature/signaturetest"
	"github.com/payout/payout/internal/pgtest"
	"github.com/payout/payout/ledger"
)

// forgeLowering appends to the ledger behind db, as anyone who may write its tables can, a
// policy event that lowers the policy from was to 0 with a made-up signer, its hash computed
// and linked to the chain's head: the chain alone cannot tell it. It returns the event's id.
func forgeLowering(t *testing.T, db *sql.DB, was int) int64 {
	t.Helper()
	var head ledger.ChainEvent
	if err := db.QueryRow(`SELECT id, hash FROM (SELECT id, hash FROM events UNION ALL SELECT id, hash FROM row_events) AS c
		ORDER BY id DESC LIMIT 1`).Scan(&head.ID, &head.Hash); err != nil {
		t.Fatal(err)
	}
	e := ledger.ChainEvent{ID: head.ID + 1, At: time.Now().UTC().Format("2006-01-02T15:04:05.000000000Z"), To: ledger.EventPolicy,
		Detail: "approval policy: 0 signers (was " + strconv.Itoa(was) + "), lowered with the signatures of alice",
		Actor:  "dba@db", Version: "v", Facts: `{"approvals":"0","signed_by":"alice","was":"` + strconv.Itoa(was) + `"}`, PrevHash: head.Hash}
	e.Hash = ledger.HashEvent(e)
	if _, err := db.Exec(`INSERT INTO events (id, ref, run_id, at, from_state, to_state, detail, payload, actor, version, facts, personal, prev_hash, hash)
		VALUES ($1, '', '', $2, '', $3, $4, '', $5, $6, $7, '', $8, $9)`, e.ID, e.At, e.To, e.Detail, e.Actor, e.Version, e.Facts, e.PrevHash, e.Hash); err != nil {
		t.Fatal(err)
	}
	return e.ID
}

// A lowering of the approval policy appended through SQL with its hash computed pays nothing
// (exit 5, naming the event and what to do), a dry run says so, and audit verify names it; a
// raise needs no signature and ends the refusal; a lowering signed by ssh-keygen keys through
// `payout policy` pays, in every later process; the forged event stays named by audit verify.
func TestForgedPolicyLoweringPaysNothing(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			u := newUserWithoutLedger(t, newSandbox(t))
			var db *sql.DB
			if engine == "postgres" {
				where := pgtest.New(t)
				u.env = append(u.env, "PAYOUT_LEDGER="+where)
				db = pgOpen(t, where)
			} else {
				path := filepath.Join(u.dir, "payout-ledger.db")
				u.env = append(u.env, "PAYOUT_LEDGER="+path)
				var err error
				if db, err = sql.Open("sqlite", path); err != nil {
					t.Fatal(err)
				}
			}
			defer db.Close()
			if out, errOut, code := u.run("init", "--approvals", "1"); code != 0 {
				t.Fatalf("init: exit %d: %s %s", code, out, errOut)
			}
			k := newSigners(t, u)
			forged := forgeLowering(t, db, 1)
			named := "approval policy: event " + strconv.FormatInt(forged, 10)
			expectExit5(t, u, named, "run", samplePath(t))
			expectExit5(t, u, "payout policy --approvals 1", "run", "--dry-run", samplePath(t))
			var payouts int
			if err := db.QueryRow(`SELECT count(*) FROM payouts`).Scan(&payouts); err != nil || payouts != 0 {
				t.Fatalf("%d payouts recorded (%v) on a forged lowering, want none", payouts, err)
			}
			if out, errOut, code := u.run("audit", "verify"); code != 4 || !strings.Contains(out, named) {
				t.Fatalf("audit verify: exit %d, want 4 naming %q: %s %s", code, named, out, errOut)
			}
			expectExit5(t, u, named, "policy")

			// A raise needs no signature, and ends the forged lowering's effect.
			if out, errOut, code := u.run("policy", "--approvals", "1"); code != 0 {
				t.Fatalf("raise: exit %d: %s %s", code, out, errOut)
			}
			expectExit5(t, u, "needs 1 distinct signers; have 0", "run", samplePath(t))

			statement, _, _ := u.run("policy", "--statement", "--approvals", "0")
			sig := filepath.Join(t.TempDir(), "alice.sig")
			if err := os.WriteFile(sig, signaturetest.Sign(t, k.alice, "payout-policy", []byte(statement)), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, errOut, code := u.run("policy", "--approvals", "0", "--sig", sig); code != 0 {
				t.Fatalf("a signed lowering: exit %d: %s %s", code, out, errOut)
			}
			var stored string
			if err := db.QueryRow(`SELECT facts FROM events WHERE to_state = 'POLICY' ORDER BY id DESC LIMIT 1`).Scan(&stored); err != nil ||
				!strings.Contains(stored, "BEGIN SSH SIGNATURE") || !strings.Contains(stored, "payout-policy v1") {
				t.Fatalf("the lowering's event stores %q (%v), want its statement and signature", stored, err)
			}
			for range 2 { // each command is a process of its own: the check holds in every one
				if out, errOut, code := u.run("run", samplePath(t)); code != 0 {
					t.Fatalf("run after a signed lowering: exit %d: %s %s", code, out, errOut)
				}
			}
			if out, errOut, code := u.run("policy"); code != 0 || !strings.Contains(out, "no approval needed") {
				t.Fatalf("policy after a signed lowering: exit %d: %s %s", code, out, errOut)
			}
			if out, errOut, code := u.run("audit", "verify"); code != 4 || !strings.Contains(out, named) {
				t.Errorf("audit verify after the raise: exit %d, want 4 still naming the forged %q: %s %s", code, named, out, errOut)
			}
		})
	}
}

// On PostgreSQL every session of the ledger, its hold and its shared limiter looks the ledger's
// tables up in its own schema: a schema named like the role, searched first by the server's
// default search path, with tables named like the ledger's in it, changes nothing a command
// reads or writes. Without the pin, the second run would find no payout and pay every row again.
func TestASchemaNamedLikeTheRoleShadowsNothing(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	u := newUserWithoutLedger(t, sb)
	where := pgtest.New(t)
	u.env = append(u.env, "PAYOUT_LEDGER="+where)
	if out, errOut, code := u.run("init"); code != 0 {
		t.Fatalf("init: exit %d: %s %s", code, out, errOut)
	}
	if out, errOut, code := u.run("run", samplePath(t)); code != 0 {
		t.Fatalf("run: exit %d: %s %s", code, out, errOut)
	}
	paid := sb.Stats().Creates
	db := pgOpen(t, where)
	defer db.Close()
	// pgtest's role is postgres: the schema "$user" names.
	pgMust(t, db, `CREATE SCHEMA postgres`, `CREATE TABLE postgres.payouts (LIKE public.payouts INCLUDING ALL)`,
		`CREATE TABLE postgres.events (LIKE public.events INCLUDING ALL)`, `CREATE TABLE postgres.runs (LIKE public.runs INCLUDING ALL)`)
	var shadowed string
	if err := db.QueryRow(`SELECT current_schema()`).Scan(&shadowed); err != nil || shadowed != "postgres" {
		t.Fatalf("an unpinned session's schema: %q (%v), want the role's", shadowed, err)
	}
	if out, errOut, code := u.run("status", "PAY-2026-11-001"); code != 0 || !strings.Contains(out, "PAY-2026-11-001") {
		t.Errorf("status of a paid payout: exit %d: %s %s", code, out, errOut)
	}
	if out, errOut, code := u.run("run", samplePath(t)); code != 0 {
		t.Fatalf("rerun: exit %d: %s %s", code, out, errOut)
	}
	if n := sb.Stats().Creates; n != paid {
		t.Errorf("the rerun sent %d creates, want none", n-paid)
	}
	var n int
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM postgres.payouts) + (SELECT count(*) FROM postgres.events) + (SELECT count(*) FROM postgres.runs)`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d rows written in the role's schema (%v), want none", n, err)
	}
	if out, errOut, code := u.run("audit", "verify"); code != 0 {
		t.Errorf("audit verify: exit %d: %s %s", code, out, errOut)
	}
}

// `payout init` writes the policy as the chain's first event, 0 included; a ledger whose policy
// events were all deleted (by whoever can lift the guard that keeps events append-only) pays
// nothing, dry run included, instead of falling back to no approval.
func TestALedgerThatLostItsPolicyPaysNothing(t *testing.T) {
	t.Parallel()
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			sb := newSandbox(t)
			u := newUserWithoutLedger(t, sb)
			var db *sql.DB
			deleteAll := []string{`DROP TRIGGER events_no_delete`, `DELETE FROM events WHERE to_state = 'POLICY'`}
			if engine == "postgres" {
				where := pgtest.New(t)
				u.env = append(u.env, "PAYOUT_LEDGER="+where)
				db = pgOpen(t, where)
				deleteAll = []string{`SET session_replication_role = replica`, deleteAll[1]}
			} else {
				path := filepath.Join(u.dir, "payout-ledger.db")
				u.env = append(u.env, "PAYOUT_LEDGER="+path)
				var err error
				if db, err = sql.Open("sqlite", path); err != nil {
					t.Fatal(err)
				}
			}
			defer db.Close()
			if out, errOut, code := u.run("init"); code != 0 {
				t.Fatalf("init: exit %d: %s %s", code, out, errOut)
			}
			var id int64
			var facts string
			if err := db.QueryRow(`SELECT id, facts FROM events WHERE to_state = 'POLICY'`).Scan(&id, &facts); err != nil || id != 1 ||
				!strings.Contains(facts, `"genesis":"init"`) || !strings.Contains(facts, `"approvals":"0"`) {
				t.Fatalf("init's policy event: id %d, facts %s (%v), want the chain's first event asking 0", id, facts, err)
			}
			pgMust(t, db, deleteAll...)
			expectExit5(t, u, "no policy event of the ledger's init", "run", samplePath(t))
			expectExit5(t, u, "restore the ledger from a backup", "run", "--dry-run", samplePath(t))
			if n := sb.Stats().Creates; n != 0 {
				t.Errorf("a ledger without its policy sent %d creates, want none", n)
			}
		})
	}
}
