package approval_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/batch/signature"
	"github.com/payout/payout/batch/signature/signaturetest"
)

// CheckPolicy: a raise needs no signature; a lowering holds with the signatures of as many
// distinct signers as the policy it replaced asked, over the statement naming the event it
// replaced; one that does not hold refuses the policy, naming its event, until a later raise
// asks at least as many as it lowered; every such lowering stays named for an audit.
func TestCheckPolicy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	alice, bob := signaturetest.NewKey(t, dir, "alice"), signaturetest.NewKey(t, dir, "bob")
	allowed := signaturetest.WriteAllowedSigners(t, filepath.Join(dir, "allowed_signers"),
		alice.AllowedLine("alice"), bob.AllowedLine("bob"))
	at := time.Now()
	sign := func(approvals int, replaces string, keys ...signaturetest.Key) []byte {
		var sigs [][]byte
		for _, k := range keys {
			sigs = append(sigs, signaturetest.Sign(t, k, signature.NamespacePolicy, approval.PolicyStatement(approvals, replaces)))
		}
		return []byte(approval.JoinSignatures(sigs))
	}
	genesis := approval.PolicyChange{ID: 1, At: at, Approvals: 2, Replaces: "none"}
	signed := approval.PolicyChange{ID: 5, At: at, Approvals: 0, Was: 2, Replaces: "1:h1", Signatures: sign(0, "1:h1", alice, bob)}
	if err := approval.CheckPolicy([]approval.PolicyChange{genesis, signed}, allowed); err != nil {
		t.Errorf("a lowering signed by two: %v", err)
	}
	for name, c := range map[string]approval.PolicyChange{
		"one signer of two":        {ID: 5, At: at, Approvals: 0, Was: 2, Replaces: "1:h1", Signatures: sign(0, "1:h1", alice, alice)},
		"names only":               {ID: 5, At: at, Approvals: 0, Was: 2, Replaces: "1:h1"},
		"signed for another event": {ID: 5, At: at, Approvals: 0, Was: 2, Replaces: "1:h1", Signatures: sign(0, "4:h4", alice, bob)},
		"signed for another count": {ID: 5, At: at, Approvals: 0, Was: 2, Replaces: "1:h1", Signatures: sign(1, "1:h1", alice, bob)},
	} {
		err := approval.CheckPolicy([]approval.PolicyChange{genesis, c}, allowed)
		var refused *approval.PolicyError
		if !errors.As(err, &refused) || refused.ID != 5 || !errors.Is(err, approval.ErrPolicyUnsigned) ||
			!strings.Contains(err.Error(), "payout policy --approvals 2") {
			t.Errorf("%s: %v, want event 5 refused, saying to raise it back to 2", name, err)
		}
		partial := approval.PolicyChange{ID: 6, At: at, Approvals: 1, Was: 0, Replaces: "5:h5"}
		back := approval.PolicyChange{ID: 7, At: at, Approvals: 2, Was: 1, Replaces: "6:h6"}
		if err := approval.CheckPolicy([]approval.PolicyChange{genesis, c, partial}, allowed); err == nil {
			t.Errorf("%s: a raise to 1 after it ends the refusal, want it kept until 2", name)
		}
		if err := approval.CheckPolicy([]approval.PolicyChange{genesis, c, partial, back}, allowed); err != nil {
			t.Errorf("%s, then raised back to 2: %v", name, err)
		}
		if all, err := approval.UnsignedLowerings([]approval.PolicyChange{genesis, c, partial, back}, allowed); err != nil || len(all) != 1 || all[0].ID != 5 {
			t.Errorf("%s: audit names %v (%v), want event 5", name, all, err)
		}
	}
	if err := approval.CheckPolicy([]approval.PolicyChange{genesis, signed}, ""); err == nil || !strings.Contains(err.Error(), approval.EnvAllowedSigners) {
		t.Errorf("a lowering with no allowed signers to check it: %v, want refused naming $%s", err, approval.EnvAllowedSigners)
	}
}
