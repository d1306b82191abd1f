package approval

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/payout/payout/batch/signature"
)

// A policy statement is what signers sign (namespace payout-policy) to lower the ledger's
// approval policy. It names the policy event it replaces, so that a signature lowers the policy
// once, on this ledger, and never again after the policy was raised since.
//
//	payout-policy v1
//	approvals	M
//	replaces	EVENT_ID:HASH
//
// The lowering's event stores the statement and the signatures themselves, and every run checks
// them again (CheckPolicy): whoever may write the ledger's database can append a policy event
// with its hash computed, but cannot sign for the people the allowed_signers file lists.

// PolicyVersion opens every policy statement.
const PolicyVersion = "payout-policy v1"

// ErrPolicyUnsigned is returned (wrapped in a *PolicyError) by CheckPolicy for a lowering whose
// stored signatures do not hold.
var ErrPolicyUnsigned = errors.New("lowers the approval policy without the signatures that allow it")

// PolicyStatement is the statement that lowers the policy to approvals, replacing the policy
// event named replaces ("ID:HASH", or "none").
func PolicyStatement(approvals int, replaces string) []byte {
	return fmt.Appendf(nil, "%s\napprovals\t%d\nreplaces\t%s\n", PolicyVersion, approvals, replaces)
}

// PolicyChange is one policy event of the ledger's chain as CheckPolicy reads it.
type PolicyChange struct {
	ID             int64
	At             time.Time // when it was recorded: its signatures are checked as of then
	Approvals, Was int
	Replaces       string // the policy event it replaced, as its statement names it
	Signatures     []byte // the armored signatures it stores, one after another
}

// PolicyError names the policy event a reader refuses, and what to do.
type PolicyError struct {
	ID             int64
	Approvals, Was int
	Why            string
	Err            error
}

func (e *PolicyError) Error() string {
	return fmt.Sprintf("approval policy: event %d %v (from %d signers to %d): %s; nothing is paid while it is the policy in force. "+
		"It was not recorded by `payout policy` with the signatures of %d allowed signers (written through SQL, or a signer's line left $%s): "+
		"run payout audit verify, and raise the policy back with `payout policy --approvals %d` (a raise needs no signature)",
		e.ID, e.Err, e.Was, e.Approvals, e.Why, e.Was, EnvAllowedSigners, e.Was)
}

func (e *PolicyError) Unwrap() error { return e.Err }

// CheckPolicy checks every lowering among changes (oldest first): its stored signatures must
// sign, as of when it was recorded, the statement naming the policy event it replaced, by as
// many distinct principals of the allowed signers (the file at allowedSigners) as the policy it
// replaced asked. A lowering that does not hold refuses the policy (a *PolicyError) until a
// later change asks at least as many signers as the policy it lowered. Raising the policy needs
// no signature: it can only hold money back.
func CheckPolicy(changes []PolicyChange, allowedSigners string) error {
	_, inForce, err := checkLowerings(changes, allowedSigners)
	if err != nil {
		return err
	}
	if inForce != nil {
		return inForce
	}
	return nil
}

// UnsignedLowerings are every lowering among changes whose signatures do not hold, those that a
// later raise made harmless included: what an audit names.
func UnsignedLowerings(changes []PolicyChange, allowedSigners string) ([]*PolicyError, error) {
	all, _, err := checkLowerings(changes, allowedSigners)
	return all, err
}

// checkLowerings checks each lowering's signatures: all that do not hold, and the one that
// refuses the policy now (nil when none does).
func checkLowerings(changes []PolicyChange, allowedSigners string) (all []*PolicyError, inForce *PolicyError, err error) {
	var allowed *signature.AllowedSigners
	for _, c := range changes {
		if c.Approvals >= c.Was {
			if inForce != nil && c.Approvals >= inForce.Was {
				inForce = nil
			}
			continue
		}
		why := "no allowed signers to check its signatures against: set $" + EnvAllowedSigners
		if allowedSigners != "" {
			if allowed == nil {
				if allowed, err = signature.LoadAllowedSigners(allowedSigners); err != nil {
					return nil, nil, fmt.Errorf("approval policy: event %d lowers it and its signatures cannot be checked: %w", c.ID, err)
				}
			}
			why = lowerWhy(c, allowed)
		}
		if why == "" {
			continue
		}
		refused := &PolicyError{ID: c.ID, Approvals: c.Approvals, Was: c.Was, Why: why, Err: ErrPolicyUnsigned}
		all = append(all, refused)
		if inForce == nil {
			inForce = refused
		}
	}
	return all, inForce, nil
}

// lowerWhy says why the signatures a lowering stores do not allow it; "" when they do.
func lowerWhy(c PolicyChange, allowed *signature.AllowedSigners) string {
	statement := PolicyStatement(c.Approvals, c.Replaces)
	var accepted []Approval
	var notCounted []string
	for i, sig := range splitArmored(c.Signatures) {
		id, err := signature.Verify(statement, sig, signature.NamespacePolicy, allowed, c.At)
		if err != nil {
			notCounted = append(notCounted, fmt.Sprintf("signature %d: %v", i+1, err))
			continue
		}
		accepted = append(accepted, Approval{Identity: id})
	}
	v := Verdict{Need: c.Was, Accepted: accepted, Signers: DistinctSigners(accepted), NotCounted: notCounted}
	return v.Missing()
}

// armorEnd closes each armored SSHSIG signature.
const armorEnd = "-----END SSH SIGNATURE-----"

// splitArmored splits signatures stored one after another.
func splitArmored(b []byte) [][]byte {
	var out [][]byte
	for {
		i := bytes.Index(b, []byte(armorEnd))
		if i < 0 {
			return out
		}
		if sig := bytes.TrimSpace(b[:i+len(armorEnd)]); len(sig) > len(armorEnd) {
			out = append(out, sig)
		}
		b = b[i+len(armorEnd):]
	}
}

// JoinSignatures stores armored signatures one after another, as CheckPolicy reads them.
func JoinSignatures(sigs [][]byte) string {
	var b strings.Builder
	for _, s := range sigs {
		b.Write(bytes.TrimSpace(s))
		b.WriteByte('\n')
	}
	return b.String()
}
