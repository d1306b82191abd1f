package send

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
func (s *Submission) prove(ctx context.Context, t lookup.Task, p ledger.Payout) *lookup.Result {
	proof, err := s.proof(ctx)
	if err == nil {
		err = proof.Check(p.Ref, p.ProviderID, p.Account, p.Amount)
	}
	if err != nil {
		return &lookup.Result{Task: t, Fatal: err}
	}
	return nil
}

// proof is the proof of the submission's run, made once.
func (s *Submission) proof(ctx context.Context) (*approval.Proof, error) {
	ps, runID := &s.cfg.State.proofs, s.runID
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.runID == runID && ps.proof != nil {
		return ps.proof, nil
	}
	ev, err := approval.Gather(ctx, s.cfg.Ledger, runID, s.cfg.AllowedSigners)
	if err != nil {
		return nil, err
	}
	ps.runID, ps.proof = runID, approval.Prove(ev, s.cfg.AllowedSigners, s.cfg.Lookups.Now())
	return ps.proof, nil
}
