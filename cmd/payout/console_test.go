package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payout/payout/batch/signature/signaturetest"
)

// A passkey's approval, written beside the file as the console writes it, passes
// `ssh-keygen -Y verify` and counts in a run exactly as an ssh-keygen signature does: one of the
// two signers the policy asks for, named in "approved_by".
func TestConsolePasskeyApprovalCountsInARun(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	sb := newSandbox(t)
	u := newUser(t, sb)
	dir := t.TempDir()
	alice := signaturetest.NewKey(t, dir, "alice")
	bob := signaturetest.NewPasskey(t, "console.example.com", "https://console.example.com")
	allowed := signaturetest.WriteAllowedSigners(t, filepath.Join(dir, "allowed_signers"),
		alice.AllowedLine("alice"), bob.AllowedLine("bob", "payout-plan,payout-reject"))
	u.env = append(u.env, "PAYOUT_ALLOWED_SIGNERS="+allowed)
	if _, errOut, code := u.run("policy", "--approvals", "2"); code != 0 {
		t.Fatalf("policy --approvals 2: exit %d: %s", code, errOut)
	}
	file := filepath.Join(u.dir, "payroll.csv")
	copyFile(t, samplePath(t), file)
	plan, errOut, code := u.run("plan", "payroll.csv")
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, errOut)
	}
	passkeySig := bob.Sign(t, "payout-plan", []byte(plan))
	if err := os.WriteFile(file+".bob.sig", passkeySig, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := signaturetest.Verify(t, allowed, "bob", "payout-plan", passkeySig, []byte(plan)); err != nil {
		t.Fatalf("ssh-keygen -Y verify refused the passkey's approval: %v: %s", err, out)
	}
	expectExit5(t, u, "needs 2 distinct signers; have 1", "run", "payroll.csv")
	u.signPlan(t, alice, "payroll.csv", file+".alice.sig")
	out, errOut, code := u.run("run", "--json", "payroll.csv")
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 {
		t.Fatalf("run with an ssh-keygen and a passkey signature: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if by, _ := res["approved_by"].(string); !strings.Contains(by, "alice") || !strings.Contains(by, "bob") {
		t.Errorf("approved_by %q: want alice and bob", by)
	}
}
