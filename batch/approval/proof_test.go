package approval_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/batch/signature"
	"github.com/payout/payout/batch/signature/signaturetest"
)

// The proof at the till: a payout is sent only when it is a row of a stored plan whose stored
// signatures verify now, by as many signers as the policy asks, and no refusal names the plan;
// a payout whose row disagrees with its events is never sent, whatever the policy.
func TestProofChecksEachSendAgainstTheStoredPlan(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	alice, bob, carol := signaturetest.NewKey(t, dir, "alice"), signaturetest.NewKey(t, dir, "bob"), signaturetest.NewKey(t, dir, "carol")
	allowed := signaturetest.WriteAllowedSigners(t, filepath.Join(dir, "allowed_signers"),
		alice.AllowedLine("alice"), bob.AllowedLine("bob"))
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	statement := []byte("payout-plan v1\nfile-sha256\taaaa\nsheet\t-\n" +
		"row\t2\t\"PAY-1\"\t1\t000181590832\t6347.10\t\"Ahmad\"\n" +
		"row\t3\t\"PAY-2\"\t2\t131860913909\t7939.84\t\"Nurul\"\n" +
		"rows\t2\tpayable\t2\trejected\t0\ntotal\tMYR\t14286.94\n")
	sum := sha256.Sum256(statement)
	digest := hex.EncodeToString(sum[:])
	sign := func(k signaturetest.Key, until string) approval.StoredSignature {
		day, _ := time.Parse(time.DateOnly, until)
		signed := append(append([]byte(nil), statement...), approval.ValidUntilLine(day)...)
		return approval.StoredSignature{Armored: signaturetest.Sign(t, k, signature.NamespacePlan, signed), ValidUntil: until}
	}
	good, expired := "2026-12-01", "2026-11-20"
	plan := func(sigs ...approval.StoredSignature) approval.StoredPlan {
		return approval.StoredPlan{Digest: digest, Statement: statement, Signatures: sigs}
	}
	aliceSig, bobSig := sign(alice, good), sign(bob, good)
	forged := aliceSig
	forged.ValidUntil = "2026-12-02" // the stored valid-until is not the one signed

	amount := func(s string) decimal.Decimal { return decimal.RequireFromString(s) }
	type send struct {
		ref      string
		provider int64
		account  string
		amount   string
	}
	paid := send{"PAY-1", 1, "000181590832", "6347.10"}
	tests := []struct {
		name string
		ev   approval.Evidence
		send send
		want string // "" when the payout is proved
	}{
		{"no approval asked", approval.Evidence{}, send{"ANY", 9, "1", "1.00"}, ""},
		{"two signers of the plan", approval.Evidence{Need: 2, Plans: []approval.StoredPlan{plan(aliceSig, bobSig)}}, paid, ""},
		{"another amount", approval.Evidence{Need: 1, Plans: []approval.StoredPlan{plan(aliceSig)}}, send{"PAY-1", 1, "000181590832", "9347.10"}, "not what the signed plan pays"},
		{"another account", approval.Evidence{Need: 1, Plans: []approval.StoredPlan{plan(aliceSig)}}, send{"PAY-1", 1, "999999999999", "6347.10"}, "not what the signed plan pays"},
		{"another provider", approval.Evidence{Need: 1, Plans: []approval.StoredPlan{plan(aliceSig)}}, send{"PAY-1", 2, "000181590832", "6347.10"}, "not what the signed plan pays"},
		{"a reference the plan does not pay", approval.Evidence{Need: 1, Plans: []approval.StoredPlan{plan(aliceSig)}}, send{"PAY-3", 1, "000181590832", "6347.10"}, "no signed plan of this run pays"},
		{"one signer of two", approval.Evidence{Need: 2, Plans: []approval.StoredPlan{plan(aliceSig)}}, paid, "needs 2 distinct signers; have 1"},
		{"an unlisted key", approval.Evidence{Need: 1, Plans: []approval.StoredPlan{plan(sign(carol, good))}}, paid, "not among the allowed signers"},
		{"an expired signature", approval.Evidence{Need: 1, Plans: []approval.StoredPlan{plan(sign(alice, expired))}}, paid, "EXPIRED"},
		{"a stored valid-until not signed", approval.Evidence{Need: 1, Plans: []approval.StoredPlan{plan(forged)}}, paid, "does not sign this statement"},
		{"an edited statement", approval.Evidence{Need: 1, Plans: []approval.StoredPlan{{Digest: digest,
			Statement: []byte(strings.Replace(string(statement), "6347.10", "9347.10", 1)), Signatures: []approval.StoredSignature{aliceSig}}}},
			paid, "not the one its approvals name"},
		{"no stored statement", approval.Evidence{Need: 1, Plans: []approval.StoredPlan{{Digest: digest, Signatures: []approval.StoredSignature{aliceSig}}}}, paid, "holds no statement"},
		{"a stored refusal", approval.Evidence{Need: 1, Plans: []approval.StoredPlan{{Digest: digest, Statement: statement,
			Signatures: []approval.StoredSignature{aliceSig}, Refused: "bob: wrong month"}}}, paid, "REJECTED by bob: wrong month"},
		{"no plan at all", approval.Evidence{Need: 1}, paid, "holds no signature of a plan"},
		{"a policy that does not hold", approval.Evidence{Refused: "approval policy: event 9 ..."}, paid, "approval policy: event 9"},
		{"a row that disagrees with its events, without approvals", approval.Evidence{Stray: map[string]string{"PAY-1": "its row is READY"}}, paid, "its row is READY"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := approval.Prove(tc.ev, allowed, now)
			err := p.Check(tc.send.ref, tc.send.provider, tc.send.account, amount(tc.send.amount))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !errors.Is(err, approval.ErrNotProved) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want a refusal saying %q", err, tc.want)
			}
		})
	}
}
