package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payout/payout/batch/signature/signaturetest"
)

// With PAYOUT_SIGNING_KEY, a pack is written with a signature that ssh-keygen -Y verify accepts,
// and audit verify --pack names its signer. A pack rewritten by anyone else (here: its events
// edited and SHA256SUMS recomputed, which the pack's own checks may not see in a member they do
// not cross-check) keeps a signature of other bytes, and is refused.
func TestAuditPackIsSignedByTheServiceAccount(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	sb := newSandbox(t)
	u := newUser(t, sb)
	keys := t.TempDir()
	svc := signaturetest.NewKey(t, keys, "payout-svc")
	bob := signaturetest.NewKey(t, keys, "bob")
	allowed := signaturetest.WriteAllowedSigners(t, filepath.Join(keys, "allowed_signers"),
		`payout-svc namespaces="payout-pack" `+svc.Public, `bob namespaces="payout-plan" `+bob.Public)
	runID, _ := paidRun(t, u, samplePath(t))

	u.env = append(u.env, "PAYOUT_SIGNING_KEY="+svc.Path)
	pack := filepath.Join(u.dir, "run.zip")
	out, errOut, code := u.run("audit", "export", "--run", runID, "--out", pack)
	if code != 0 || !strings.Contains(out, "signed by SHA256:") {
		t.Fatalf("signed export: exit %d: %s %s", code, out, errOut)
	}
	sig, err := os.ReadFile(pack + ".sig")
	if err != nil {
		t.Fatal(err)
	}
	zipBytes, err := os.ReadFile(pack)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := signaturetest.Verify(t, allowed, "payout-svc", "payout-pack", sig, zipBytes); err != nil {
		t.Fatalf("ssh-keygen -Y verify of the pack's signature: %v: %s", err, out)
	}

	if _, errOut, code := u.run("audit", "verify", "--pack", pack); code != 2 || !strings.Contains(errOut, "PAYOUT_ALLOWED_SIGNERS") {
		t.Errorf("verify of a signed pack without allowed signers: exit %d, want 2 naming PAYOUT_ALLOWED_SIGNERS: %s", code, errOut)
	}
	u.env = append(u.env, "PAYOUT_ALLOWED_SIGNERS="+allowed)
	if out, errOut, code := u.run("audit", "verify", "--pack", pack); code != 0 || !strings.Contains(out, "signed by payout-svc") {
		t.Fatalf("verify of the signed pack: exit %d: %s %s", code, out, errOut)
	}
	if out, errOut, code := u.run("audit", "verify", "--pack", pack, "--signed-by", "payout-svc"); code != 0 {
		t.Errorf("verify --signed-by payout-svc of its pack: exit %d: %s %s", code, out, errOut)
	}
	if _, errOut, code := u.run("audit", "verify", "--pack", pack, "--signed-by", "payout-svc-2"); code != 4 || !strings.Contains(errOut, "not by payout-svc-2") {
		t.Errorf("verify --signed-by another principal: exit %d, want 4: %s", code, errOut)
	}
	// The same pack without its signature is consistent in itself, but not what --signed-by asks.
	unsigned := filepath.Join(u.dir, "unsigned.zip")
	copyFile(t, pack, unsigned)
	if _, errOut, code := u.run("audit", "verify", "--pack", unsigned, "--signed-by", "payout-svc"); code != 4 || !strings.Contains(errOut, "is unsigned") {
		t.Errorf("verify --signed-by of an unsigned pack: exit %d, want 4: %s", code, errOut)
	}

	// A pack signed by a person's key, which the allowed signers trust for plans only.
	if err := os.WriteFile(pack+".sig", signaturetest.Sign(t, bob, "payout-pack", zipBytes), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := u.run("audit", "verify", "--pack", pack); code != 4 || !strings.Contains(errOut, "does not hold") {
		t.Errorf("a pack signed by bob: exit %d, want 4: %s", code, errOut)
	}

	// Other bytes under the service account's signature: one byte of the zip's comment changed.
	if err := os.WriteFile(pack+".sig", sig, 0o600); err != nil {
		t.Fatal(err)
	}
	changed := append([]byte(nil), zipBytes...)
	changed[len(changed)-1] ^= 0x01
	if err := os.WriteFile(pack, changed, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := u.run("audit", "verify", "--pack", pack); code != 4 {
		t.Errorf("a changed pack under the old signature: exit %d, want 4: %s", code, errOut)
	}
}

// The pack of a run paid on signatures verifies, its reports' "Approved by" held against the
// signatures it carries; a report made to name another approver, with SHA256SUMS
// written again, is refused.
func TestAuditPackHoldsItsApproversAgainstTheChain(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	u := newUser(t, newSandbox(t))
	k := newSigners(t, u)
	if _, errOut, code := u.run("policy", "--approvals", "1"); code != 0 {
		t.Fatalf("policy: exit %d: %s", code, errOut)
	}
	file := filepath.Join(u.dir, "payroll.csv")
	copyFile(t, samplePath(t), file)
	u.signPlan(t, k.alice, "payroll.csv", file+".alice.sig")
	runID, _ := paidRun(t, u, file)
	_, members := exportPack(t, u, runID, "run.zip")
	forged := filepath.Join(u.dir, "forged.zip")
	writeZipWithSums(t, forged, forge(t, members, `\.report\.html$`, replaceOnce(`id="approved-by">alice at`, `id="approved-by">carol at`)))
	out, errOut, code := u.run("audit", "verify", "--pack", forged)
	if code != 4 || !strings.Contains(out, "no signature in the pack, nor decision in approvals.jsonl, proves carol approved it") {
		t.Errorf("a report naming another approver: exit %d, want 4 naming carol:\n%s%s", code, out, errOut)
	}
}
