package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payout/payout/batch/signature/signaturetest"
)

// With PAYOUT_SIGNING_KEY, a run's end writes the chain head its reports print, signed, beside
// them; ssh-keygen -Y verify accepts it, and audit verify --head finds it in the ledger. A ledger
// replaced by another one, intact in itself, no longer holds that head: exit 4.
func TestRunSignsTheChainHeadItReports(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	sb := newSandbox(t)
	u := newUser(t, sb)
	keys := t.TempDir()
	svc := signaturetest.NewKey(t, keys, "payout-svc")
	allowed := signaturetest.WriteAllowedSigners(t, filepath.Join(keys, "allowed_signers"), `payout-svc namespaces="payout-pack" `+svc.Public)
	u.env = append(u.env, "PAYOUT_SIGNING_KEY="+svc.Path, "PAYOUT_ALLOWED_SIGNERS="+allowed)
	runID, reports := paidRun(t, u, samplePath(t))
	var head string
	for _, r := range reports {
		if strings.HasSuffix(r, ".chain-head") {
			head = r
		}
	}
	if head == "" {
		t.Fatalf("no .chain-head among the run's reports %v", reports)
	}
	if !filepath.IsAbs(head) {
		head = filepath.Join(u.dir, head)
	}
	statement, err := os.ReadFile(head)
	if err != nil {
		t.Fatal(err)
	}
	html, _ := filepath.Glob(filepath.Join(u.dir, "reports", "*"+runID+".report.html"))
	page, err := os.ReadFile(html[0])
	if err != nil {
		t.Fatal(err)
	}
	_, printed, _ := strings.Cut(string(statement), "head\t")
	if !strings.Contains(string(page), strings.TrimSpace(printed)) {
		t.Errorf("the signed head %q is not the one the report prints", printed)
	}
	sig, err := os.ReadFile(head + ".sig")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := signaturetest.Verify(t, allowed, "payout-svc", "payout-pack", sig, statement); err != nil {
		t.Fatalf("ssh-keygen -Y verify of the signed head: %v: %s", err, out)
	}
	out, errOut, code := u.run("audit", "verify", "--head", head, "--signed-by", "payout-svc")
	if code != 0 || !strings.Contains(out, "reported, signed by payout-svc") || !strings.Contains(out, "is in the chain") {
		t.Fatalf("audit verify --head: exit %d: %s %s", code, out, errOut)
	}

	// Another ledger, as whole and intact as the first, put in its place.
	other := newUser(t, sb)
	paidRun(t, other, samplePath(t))
	data, err := os.ReadFile(filepath.Join(other.dir, "payout-ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		os.Remove(filepath.Join(u.dir, "payout-ledger.db"+suffix))
	}
	if err := os.WriteFile(filepath.Join(u.dir, "payout-ledger.db"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = u.run("audit", "verify", "--head", head)
	if code != 4 || !strings.Contains(out, "that run "+runID+" reported, signed by payout-svc") {
		t.Errorf("audit verify --head of a replaced ledger: exit %d, want 4 naming the head: %s %s", code, out, errOut)
	}
}
