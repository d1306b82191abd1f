package approval

import (
	"context"
	"errors"

	"github.com/payout/payout/ledger"
)

// PolicyReader reads the ledger's approval policy and its history.
type PolicyReader interface {
	ApprovalPolicy(ctx context.Context) (ledger.ApprovalPolicy, error)
}

// CheckedPolicy is the ledger's approval policy in force, once the signatures that each lowering
// stores are checked again against the allowed signers (the file at allowedSigners, which the
// database does not hold): a lowering that does not hold refuses it (a *PolicyError).
func CheckedPolicy(ctx context.Context, db PolicyReader, allowedSigners string) (ledger.ApprovalPolicy, error) {
	pol, err := db.ApprovalPolicy(ctx)
	if err != nil {
		return pol, err
	}
	return pol, CheckPolicy(policyChanges(pol), allowedSigners)
}

// UnsignedLedgerLowerings are the lowerings of the policy whose stored signatures do not hold, those
// a later raise made harmless included, for an audit to name.
func UnsignedLedgerLowerings(ctx context.Context, db PolicyReader, allowedSigners string) ([]*PolicyError, error) {
	pol, err := db.ApprovalPolicy(ctx)
	if err != nil {
		return nil, err
	}
	return UnsignedLowerings(policyChanges(pol), allowedSigners)
}

// policyChanges are the ledger's policy events as the approval judge reads them.
func policyChanges(pol ledger.ApprovalPolicy) []PolicyChange {
	changes := make([]PolicyChange, len(pol.Changes))
	for i, c := range pol.Changes {
		changes[i] = PolicyChange{ID: c.Event.ID, At: c.Event.At, Approvals: c.Approvals, Was: c.Was,
			Replaces: c.Replaces, Signatures: []byte(c.Event.Facts["signatures"])}
	}
	return changes
}

// PolicyRefused says whether err refuses the policy itself: a lowering whose signatures do not
// hold, or a ledger that has lost its policy. Nothing is paid (exit 5) until people act.
func PolicyRefused(err error) bool {
	var refused *PolicyError
	return errors.As(err, &refused) || errors.Is(err, ledger.ErrPolicyLost) || errors.Is(err, ledger.ErrPolicyForged)
}

// Command is the command a signer runs to approve the file at path.
func Command(path string) string {
	return "payout approve " + path
}
