package batch

import (
	"context"
	"sync"

	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/batch/lookup"
	"github.com/payout/payout/ledger"
)

// proofs holds the proof of the run being sent (approval.Prove), made at its first send: a
// plan's signatures are verified once a run, and each send is a lookup.
type proofs struct {
	mu    sync.Mutex
	runID string
	proof *approval.Proof
}

// prove is the check at the till, just before a payout's intent: nil when the evidence the
// ledger stores proves p approved; else the result that stops the run, p unsent (exit 5).
func (s *submission) prove(ctx context.Context, t lookup.Task, p ledger.Payout) *lookup.Result {
	proof, err := s.r.proof(ctx, s.runID)
	if err == nil {
		err = proof.Check(p.Ref, p.ProviderID, p.Account, p.Amount)
	}
	if err != nil {
		return &lookup.Result{Task: t, Fatal: err}
	}
	return nil
}

// proof is the proof of run runID, made once.
func (r *Runner) proof(ctx context.Context, runID string) (*approval.Proof, error) {
	ps := r.cfg.proofs
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.runID == runID && ps.proof != nil {
		return ps.proof, nil
	}
	ev, err := r.evidence(ctx, runID)
	if err != nil {
		return nil, err
	}
	ps.runID, ps.proof = runID, approval.Prove(ev, r.cfg.Approval.AllowedSigners, r.cfg.Now())
	return ps.proof, nil
}

// evidence gathers what the ledger stores of the approval of run runID: whether the chain holds
// from the last signed head on (nothing is proved when it does not), the payouts whose rows
// disagree with their events, the policy in force (its lowerings' signatures checked again), and
// each plan the run's approvals name, with its statement, its signatures and any refusal of it.
func (r *Runner) evidence(ctx context.Context, runID string) (approval.Evidence, error) {
	db := r.cfg.Ledger
	if why, err := r.sinceSignedHead(ctx); err != nil || why != "" {
		return approval.Evidence{Refused: why}, err
	}
	stray, err := db.StrayPayouts(ctx)
	if err != nil {
		return approval.Evidence{}, err
	}
	pol, err := CheckedPolicy(ctx, db, r.cfg.Approval.AllowedSigners)
	if policyRefused(err) {
		return approval.Evidence{Refused: err.Error(), Stray: stray}, nil
	}
	if err != nil || pol.Approvals == 0 {
		return approval.Evidence{Stray: stray}, err
	}
	events, err := db.RunApprovals(ctx, runID)
	if err != nil {
		return approval.Evidence{}, err
	}
	ev := approval.Evidence{Need: pol.Approvals, Stray: stray}
	index := map[string]int{}
	for _, e := range events {
		digest := e.Facts["plan_sha256"]
		i, seen := index[digest]
		if !seen {
			plan, err := storedPlan(ctx, db, digest, e.Facts["file_sha256"])
			if err != nil {
				return approval.Evidence{}, err
			}
			i = len(ev.Plans)
			index[digest] = i
			ev.Plans = append(ev.Plans, plan)
		}
		ev.Plans[i].Signatures = append(ev.Plans[i].Signatures,
			approval.StoredSignature{Armored: []byte(e.Facts["signature"]), ValidUntil: e.Facts["valid_until"]})
	}
	return ev, nil
}

// storedPlan is the plan of digest as the ledger stores it, with the refusal recorded of it or
// of its file's bytes.
func storedPlan(ctx context.Context, db Ledger, digest, fileSHA256 string) (approval.StoredPlan, error) {
	plan := approval.StoredPlan{Digest: digest}
	statement, ok, err := db.PlanStatement(ctx, digest)
	if err != nil {
		return plan, err
	}
	if ok {
		plan.Statement = []byte(statement)
	}
	refusals, err := db.Rejections(ctx, digest, fileSHA256)
	if err != nil {
		return plan, err
	}
	if len(refusals) > 0 {
		plan.Refused = refusals[0].Facts["rejected"]
	}
	return plan, nil
}
