package approval

import (
	"context"

	"github.com/payout/payout/ledger"
)

// EvidenceLedger is what the ledger stores of a run's approval: the signed heads and the chain
// since, the policy, the plans' statements, the approvals and refusals, and the stray payouts.
type EvidenceLedger interface {
	SignedHeads
	PolicyReader
	PlanStatements
	StrayPayouts(ctx context.Context) (map[string]string, error)
	// LedgerEvents reads the run's approvals and the refusals of their plans (and, through
	// SignedHeads, the latest signed head; through PlanStatements, the plans' statements).
	LedgerEvents(ctx context.Context, f ledger.EventFilter) ([]ledger.LedgerEvent, error)
}

// Gather collects what the ledger stores of the approval of run runID, for Prove: whether the
// chain holds from the last signed head on (nothing is proved when it does not), the payouts
// whose rows disagree with their events, the policy in force (its lowerings' signatures checked
// again against the file at allowedSigners), and each plan the run's approvals name, with its
// statement, its signatures and any refusal of it.
func Gather(ctx context.Context, db EvidenceLedger, runID, allowedSigners string) (Evidence, error) {
	if why, err := SinceSignedHead(ctx, db, allowedSigners); err != nil || why != "" {
		return Evidence{Refused: why}, err
	}
	stray, err := db.StrayPayouts(ctx)
	if err != nil {
		return Evidence{}, err
	}
	pol, err := CheckedPolicy(ctx, db, allowedSigners)
	if PolicyRefused(err) {
		return Evidence{Refused: err.Error(), Stray: stray}, nil
	}
	if err != nil || pol.Approvals == 0 {
		return Evidence{Stray: stray}, err
	}
	events, err := db.LedgerEvents(ctx, ledger.EventFilter{Kind: ledger.EventApproved, RunID: runID})
	if err != nil {
		return Evidence{}, err
	}
	ev := Evidence{Need: pol.Approvals, Stray: stray}
	index := map[string]int{}
	for _, e := range events {
		digest := e.Facts["plan_sha256"]
		i, seen := index[digest]
		if !seen {
			plan, err := storedPlan(ctx, db, digest, e.Facts["file_sha256"])
			if err != nil {
				return Evidence{}, err
			}
			i = len(ev.Plans)
			index[digest] = i
			ev.Plans = append(ev.Plans, plan)
		}
		ev.Plans[i].Signatures = append(ev.Plans[i].Signatures,
			StoredSignature{Armored: []byte(e.Facts["signature"]), ValidUntil: e.Facts["valid_until"]})
	}
	return ev, nil
}

// storedPlan is the plan of digest as the ledger stores it, with the refusal recorded of it or
// of its file's bytes.
func storedPlan(ctx context.Context, db EvidenceLedger, digest, fileSHA256 string) (StoredPlan, error) {
	plan := StoredPlan{Digest: digest}
	statement, ok, err := StoredStatement(ctx, db, digest)
	if err != nil {
		return plan, err
	}
	if ok {
		plan.Statement = []byte(statement)
	}
	refusals, err := db.LedgerEvents(ctx, ledger.EventFilter{Kind: ledger.EventRejected, PlanSHA256: digest, FileSHA256: fileSHA256})
	if err != nil {
		return plan, err
	}
	if len(refusals) > 0 {
		plan.Refused = refusals[0].Facts["rejected"]
	}
	return plan, nil
}
