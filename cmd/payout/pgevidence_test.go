package main_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/payout/payout/batch/signature/signaturetest"
	"github.com/payout/payout/internal/pgtest"
	"github.com/payout/payout/ledger"
)

// newPGUser is a user whose ledger is a new PostgreSQL database (PAYOUT_LEDGER), made by init;
// it returns the user and the URL.
func newPGUser(t *testing.T) (*user, string) {
	t.Helper()
	u := newUserWithoutLedger(t, newSandbox(t))
	where := pgtest.New(t)
	u.env = append(u.env, "PAYOUT_LEDGER="+where)
	if out, errOut, code := u.run("init"); code != 0 {
		t.Fatalf("init: exit %d: %s %s", code, out, errOut)
	}
	return u, where
}

// rewriteChain rewrites the whole chain of the ledger at where as someone with the database role
// can: the text of the first event changed, and every hash from there recomputed, so that the
// chain is intact in itself.
func rewriteChain(t *testing.T, where string) {
	t.Helper()
	db := pgOpen(t, where)
	defer db.Close()
	pgMust(t, db, `SET session_replication_role = replica`)
	rows, err := db.Query(`SELECT 'events', id, ref, run_id, at, from_state, to_state, detail, actor, version, facts, personal FROM events
		UNION ALL SELECT 'row_events', id, ref, run_id, at, from_state, to_state, detail, actor, version, facts, personal FROM row_events ORDER BY 2`)
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		table string
		e     ledger.ChainEvent
	}
	var all []entry
	for rows.Next() {
		var x entry
		if err := rows.Scan(&x.table, &x.e.ID, &x.e.Ref, &x.e.RunID, &x.e.At, &x.e.From, &x.e.To, &x.e.Detail, &x.e.Actor, &x.e.Version, &x.e.Facts, &x.e.Personal); err != nil {
			t.Fatal(err)
		}
		all = append(all, x)
	}
	rows.Close()
	prev := ""
	for i, x := range all {
		if i == 0 {
			x.e.Detail += " (rewritten)"
		}
		x.e.PrevHash = prev
		x.e.Hash = ledger.HashEvent(x.e)
		prev = x.e.Hash
		if _, err := db.Exec(`UPDATE `+x.table+` SET detail = $1, prev_hash = $2, hash = $3 WHERE id = $4`, x.e.Detail, x.e.PrevHash, x.e.Hash, x.e.ID); err != nil {
			t.Fatal(err)
		}
	}
}

// On a PostgreSQL ledger a run's end writes the signed chain head, and audit export a signed
// pack, as on a file. Someone with the database role who rewrites the whole chain, every hash
// recomputed, leaves a ledger that audit verify finds intact in itself; --head names it (exit 4).
func TestSignedEvidenceOnAPostgresLedger(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	u, where := newPGUser(t)
	keys := t.TempDir()
	svc := signaturetest.NewKey(t, keys, "payout-svc")
	allowed := signaturetest.WriteAllowedSigners(t, filepath.Join(keys, "allowed_signers"), `payout-svc namespaces="payout-pack" `+svc.Public)
	u.env = append(u.env, "PAYOUT_SIGNING_KEY="+svc.Path, "PAYOUT_ALLOWED_SIGNERS="+allowed)
	runID, reports := paidRun(t, u, samplePath(t))
	head := ""
	for _, r := range reports {
		if strings.HasSuffix(r, ".chain-head") {
			head = r
		}
	}
	if head == "" {
		t.Fatalf("no .chain-head among the run's reports %v", reports)
	}
	if out, errOut, code := u.run("audit", "verify", "--head", head, "--signed-by", "payout-svc"); code != 0 || !strings.Contains(out, "is in the chain") {
		t.Fatalf("audit verify --head: exit %d: %s %s", code, out, errOut)
	}
	pack := filepath.Join(u.dir, "run.zip")
	if out, errOut, code := u.run("audit", "export", "--run", runID, "--out", pack); code != 0 || !strings.Contains(out, "signed by SHA256:") {
		t.Fatalf("signed export: exit %d: %s %s", code, out, errOut)
	}
	if out, errOut, code := u.run("audit", "verify", "--pack", pack, "--signed-by", "payout-svc"); code != 0 {
		t.Fatalf("verify of the signed pack: exit %d: %s %s", code, out, errOut)
	}

	rewriteChain(t, where)
	if out, errOut, code := u.run("audit", "verify"); code != 0 {
		t.Fatalf("audit verify of a chain rewritten whole: exit %d, %s %s; want 0 (intact in itself: what --head is for)", code, out, errOut)
	}
	out, errOut, code := u.run("audit", "verify", "--head", head)
	if code != 4 || !strings.Contains(out, "that run "+runID+" reported, signed by payout-svc") {
		t.Errorf("audit verify --head of a rewritten chain: exit %d, want 4 naming the head: %s %s", code, out, errOut)
	}
	// The pack exported before the rewrite still verifies: it is the evidence of what was.
	if out, errOut, code := u.run("audit", "verify", "--pack", pack, "--signed-by", "payout-svc"); code != 0 {
		t.Errorf("verify of the pack after the ledger's rewrite: exit %d: %s %s", code, out, errOut)
	}
}

// On a PostgreSQL ledger whose policy asks for a signature, a policy event written by hand
// through SQL (approvals 0) pays nothing: the run refuses the policy and audit verify names the
// event. An APPROVED event written by hand is named too.
func TestApprovalsOnAPostgresLedgerHoldAgainstSQL(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	u, where := newPGUser(t)
	newSigners(t, u)
	if out, errOut, code := u.run("policy", "--approvals", "1"); code != 0 {
		t.Fatalf("policy: exit %d: %s %s", code, out, errOut)
	}
	db := pgOpen(t, where)
	defer db.Close()
	pgMust(t, db, `SET session_replication_role = replica`,
		`INSERT INTO events (id, ref, run_id, at, from_state, to_state, detail, payload, actor, version, facts, personal, prev_hash, hash)
			SELECT max(id) + 1, '', '', '2026-11-20T00:00:00.000000000Z', '', 'POLICY', 'approval policy: 0 signers (was 1), lowered with the signatures of alice',
			'', 'dba', 'v', '{"approvals":"0","signed_by":"alice","was":"1"}', '', '', 'forged' FROM
			(SELECT id FROM events UNION ALL SELECT id FROM row_events) AS ids`)
	out, errOut, code := u.run("run", samplePath(t))
	if code == 0 || !strings.Contains(out+errOut, "approval policy: event") || !strings.Contains(out+errOut, "payout audit verify") {
		t.Errorf("run on a policy lowered by SQL: exit %d, want a refusal naming the policy's event: %s %s", code, out, errOut)
	}
	var payouts int
	if err := db.QueryRow(`SELECT count(*) FROM payouts`).Scan(&payouts); err != nil || payouts != 0 {
		t.Errorf("%d payouts recorded (%v), want none", payouts, err)
	}
	out, errOut, code = u.run("audit", "verify")
	if code != 4 || !strings.Contains(out, "its content does not match its hash") {
		t.Errorf("audit verify of a policy written by hand: exit %d, want 4 naming the event: %s %s", code, out, errOut)
	}

	// A signature recorded by hand: the chain names it.
	u2, where2 := newPGUser(t)
	db2 := pgOpen(t, where2)
	defer db2.Close()
	pgMust(t, db2, `INSERT INTO events (id, ref, run_id, at, from_state, to_state, detail, payload, actor, version, facts, personal, prev_hash, hash)
		VALUES (2, '', 'run-x', '2026-11-20T00:00:00.000000000Z', '', 'APPROVED', 'plan signed by alice', '', 'dba', 'v', '{"principal":"alice"}', '', '', 'forged')`)
	if out, errOut, code := u2.run("audit", "verify"); code != 4 || !strings.Contains(out, "event 2: ") || !strings.Contains(out, "its content does not match its hash") {
		t.Errorf("audit verify of an APPROVED event written by hand: exit %d, want 4 naming it: %s %s", code, out, errOut)
	}
}
