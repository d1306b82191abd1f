package signature_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/batch/signature"
	"github.com/payout/payout/batch/signature/signaturetest"
)

// A passkey's assertion over the SSHSIG signed data of a plan is an SSHSIG signature that
// ssh-keygen and this package both accept, for the principal whose allowed_signers line holds
// the passkey's sk-ecdsa key; another statement, a reader's line, an assertion for another
// challenge or origin are refused by both. An assertion made without the user present is refused
// here (as x/crypto/ssh refuses such a security-key signature), though ssh-keygen 9.2 takes it.
func TestPasskeySignatureIsVerifiedBySSHKeygen(t *testing.T) {
	t.Parallel()
	signaturetest.RequireSSHKeygen(t)
	dir := t.TempDir()
	alice := signaturetest.NewPasskey(t, "console.example.com", "https://console.example.com")
	reader := signaturetest.NewPasskey(t, "console.example.com", "https://console.example.com")
	allowed := signaturetest.WriteAllowedSigners(t, filepath.Join(dir, "allowed_signers"),
		alice.AllowedLine("alice", "payout-plan,payout-reject"), reader.AllowedLine("rita", "payout-audit"))
	if !strings.Contains(alice.AllowedLine("alice", ""), "sk-ecdsa-sha2-nistp256@openssh.com AAAA") {
		t.Fatalf("allowed line %q: want an sk-ecdsa-sha2-nistp256@openssh.com key", alice.AllowedLine("alice", ""))
	}
	a, err := signature.LoadAllowedSigners(allowed)
	if err != nil {
		t.Fatal(err)
	}
	plan := []byte("payout-plan v1\nfile payroll.csv\nrow 1 EMP-001 RM 1,250.00\n")
	sig := alice.Sign(t, signature.NamespacePlan, plan)
	if !strings.HasPrefix(string(sig), "-----BEGIN SSH SIGNATURE-----") {
		t.Fatalf("not armored: %s", sig)
	}
	if out, err := signaturetest.Verify(t, allowed, "alice", signature.NamespacePlan, sig, plan); err != nil {
		t.Fatalf("ssh-keygen -Y verify refused the passkey's signature: %v: %s", err, out)
	}
	id, err := signature.Verify(plan, sig, signature.NamespacePlan, a, time.Now())
	if err != nil || id.Principal() != "alice" {
		t.Fatalf("Verify: %v, %q; want alice", err, id.Principal())
	}
	parsed, _ := signature.Parse(sig)
	if parsed.Fingerprint() != id.Fingerprint {
		t.Errorf("fingerprint %s, identity %s", parsed.Fingerprint(), id.Fingerprint)
	}

	other := []byte("payout-plan v1\nfile payroll.csv\nrow 1 EMP-001 RM 9,250.00\n")
	if out, err := signaturetest.Verify(t, allowed, "alice", signature.NamespacePlan, sig, other); err == nil {
		t.Errorf("ssh-keygen accepted the signature for another plan: %s", out)
	}
	if _, err := signature.Verify(other, sig, signature.NamespacePlan, a, time.Now()); !errors.Is(err, signature.ErrBadSignature) {
		t.Errorf("Verify of another plan: %v, want ErrBadSignature", err)
	}

	readerSig := reader.Sign(t, signature.NamespacePlan, plan)
	if out, err := signaturetest.Verify(t, allowed, "rita", signature.NamespacePlan, readerSig, plan); err == nil {
		t.Errorf("ssh-keygen accepted a reader's approval: %s", out)
	}
	if _, err := signature.Verify(plan, readerSig, signature.NamespacePlan, a, time.Now()); !errors.Is(err, signature.ErrUnknownKey) {
		t.Errorf("Verify of a reader's approval: %v, want ErrUnknownKey", err)
	}

	forged := map[string]signature.Assertion{}
	otherChallenge, _ := signature.SignedData(strings.NewReader(string(other)), signature.NamespacePlan)
	forged["an assertion of another plan's challenge"] = alice.Assert(t, otherChallenge, alice.Origin, 0x05)
	challenge, _ := signature.SignedData(strings.NewReader(string(plan)), signature.NamespacePlan)
	forged["an assertion from another origin"] = alice.Assert(t, challenge, "https://evil.example", 0x05)
	for name, as := range forged {
		armored, err := signature.WebAuthnSignature(alice.Key, signature.NamespacePlan, alice.Origin, as)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if out, err := signaturetest.Verify(t, allowed, "alice", signature.NamespacePlan, armored, plan); err == nil {
			t.Errorf("%s: ssh-keygen accepted it: %s", name, out)
		}
		if _, err := signature.Verify(plan, armored, signature.NamespacePlan, a, time.Now()); !errors.Is(err, signature.ErrBadSignature) {
			t.Errorf("%s: Verify: %v, want ErrBadSignature", name, err)
		}
	}
	absent, err := signature.WebAuthnSignature(alice.Key, signature.NamespacePlan, alice.Origin, alice.Assert(t, challenge, alice.Origin, 0x04))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signature.Verify(plan, absent, signature.NamespacePlan, a, time.Now()); !errors.Is(err, signature.ErrBadSignature) || !strings.Contains(err.Error(), "user present") {
		t.Errorf("an assertion without the user present: Verify: %v, want ErrBadSignature saying so", err)
	}
}
