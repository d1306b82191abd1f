package ledger_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/ledger"
)

// TestApprovalPolicyIsInTheChain: the policy is the latest policy event of the chain, a change
// decided on a policy that changed meanwhile is refused, the run's approval events read back,
// and the chain with these events verifies intact.
func TestApprovalPolicyIsInTheChain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := mustOpen(t)
	pol, err := db.ApprovalPolicy(ctx)
	if err != nil || pol.Approvals != 0 || pol.Event.ID != 1 || pol.Event.Facts["genesis"] != "init" {
		t.Fatalf("a new ledger's policy: %+v %v, want 0 approvals set by its first event, the init's", pol, err)
	}
	decidedOn := ledger.PolicyRef(pol.Event)
	if _, err := db.AppendLedgerEvents(ctx, ledger.LedgerEvent{Kind: ledger.EventPolicy, Detail: "approvals 2", Facts: map[string]string{"approvals": "2", "was": "0", ledger.FactReplaces: decidedOn}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendLedgerEvents(ctx, ledger.LedgerEvent{Kind: ledger.EventPolicy, Facts: map[string]string{"approvals": "0", ledger.FactReplaces: decidedOn}}); !errors.Is(err, ledger.ErrPolicyChanged) {
		t.Fatalf("a change decided on an old policy: %v, want ErrPolicyChanged", err)
	}
	now, err := db.ApprovalPolicy(ctx)
	if err != nil || now.Approvals != 2 || now.Event.ID == 0 || now.Event.Hash == "" {
		t.Fatalf("policy %+v %v, want 2 approvals with its event", now, err)
	}
	_, err = db.AppendLedgerEvents(ctx, ledger.LedgerEvent{RunID: "RUN-1", Kind: ledger.EventApproved, Detail: "approved by alice",
		Facts: map[string]string{"principal": "alice", "fingerprint": "SHA256:x"}})
	if err != nil {
		t.Fatal(err)
	}
	list, err := db.LedgerEvents(ctx, ledger.EventFilter{Kind: ledger.EventApproved, RunID: "RUN-1"})
	if err != nil || len(list) != 1 || list[0].Facts["principal"] != "alice" {
		t.Fatalf("approvals of RUN-1: %+v %v", list, err)
	}
	rep, err := db.VerifyChain(ctx)
	if err != nil || len(rep.Findings) != 0 || rep.Events != 3 {
		t.Fatalf("verify: %+v %v, want intact with 3 events (the genesis, the policy, the approval)", rep, err)
	}
}

// TestApprovalsTableTakesNoRows: a row put into the old approvals table by hand is refused.
func TestApprovalsTableTakesNoRows(t *testing.T) {
	t.Parallel()
	db, _ := mustOpen(t)
	_, err := ledger.SQLOf(db).Exec(`INSERT INTO approvals (file, file_sha256, plan_digest, row_count, total, new_payouts, new_total,
		providers, providers_digest, decision, reason, actor, maker, run_id, decided_at)
		VALUES ('f', 'ab', 'cd', 1, '1', 1, '1', 1, 'x', 'approved', '', 'bob', 'alice', '', '2026-11-24T00:00:00Z')`)
	if err == nil || !strings.Contains(err.Error(), "signatures") {
		t.Fatalf("insert into approvals: %v, want refused", err)
	}
}

// A policy event written by hand, its hash computed and linked to the chain, that names another
// policy than the one before it as the one it replaces, is refused by every reader: nothing is
// paid on a policy whose history does not hold together.
func TestAPolicyEventThatNamesAnotherItReplacesIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := mustOpen(t)
	pol, err := db.ApprovalPolicy(ctx)
	must(t, err)
	head, err := db.ChainHead(ctx)
	must(t, err)
	e := ledger.ChainEvent{ID: head.ID + 1, At: time.Now().UTC().Format("2006-01-02T15:04:05.000000000Z"), To: ledger.EventPolicy,
		Detail: "approval policy: 2 signers (was 0)", Actor: "dba@db", Version: "v",
		Facts: `{"approvals":"2","replaces":"` + strconv.FormatInt(pol.Event.ID, 10) + `:0000","was":"0"}`, PrevHash: head.Hash}
	e.Hash = ledger.HashEvent(e)
	_, err = ledger.SQLOf(db).Exec(`INSERT INTO events (id, ref, run_id, at, from_state, to_state, detail, payload, actor, version, facts, personal, prev_hash, hash)
		VALUES ($1, '', '', $2, '', $3, $4, '', $5, $6, $7, '', $8, $9)`, e.ID, e.At, e.To, e.Detail, e.Actor, e.Version, e.Facts, e.PrevHash, e.Hash)
	must(t, err)
	_, err = db.ApprovalPolicy(ctx)
	if !errors.Is(err, ledger.ErrPolicyForged) || !strings.Contains(err.Error(), "says it replaced policy event "+strconv.FormatInt(pol.Event.ID, 10)+":0000") {
		t.Fatalf("a policy event naming another it replaces: %v, want ErrPolicyForged naming what it says", err)
	}
}
