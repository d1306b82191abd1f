package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/payout/payout/batch/signature/signaturetest"
)

// TestCommandSignatureFIFOIsRefused: a FIFO named like a signature beside a file (anyone who may
// drop a file there can make one) is named and counts for nothing; the run does not wait for a
// writer, holding the ledger's lock, and pays nothing.
func TestCommandSignatureFIFOIsRefused(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	u := newUser(t, sb)
	newSigners(t, u)
	if _, errOut, code := u.run("policy", "--approvals", "1"); code != 0 {
		t.Fatal(errOut)
	}
	file := filepath.Join(u.dir, "nov.csv")
	copyFile(t, samplePath(t), file)
	if err := syscall.Mkfifo(file+".x.sig", 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := u.runWithin(20*time.Second, "run", "nov.csv")
	if code != 5 || !strings.Contains(out+errOut, "nov.csv.x.sig: a named pipe (FIFO), not a regular file: ignored") {
		t.Fatalf("run beside a FIFO signature: exit %d, want 5 naming it\n%s%s", code, out, errOut)
	}
	if n := sb.Stats().Creates; n != 0 {
		t.Errorf("service created %d payouts", n)
	}
	if _, err := os.Stat(file + ".x.sig"); err != nil {
		t.Error(err)
	}
}

// TestCommandKeyAndItsCertificateAreOneSigner: a certificate is its key under the names the
// authority gave it; alice signing once with her key (listed as alice) and once with a
// certificate of that same key (alice@corp, from a listed authority) is one signer, not two.
func TestCommandKeyAndItsCertificateAreOneSigner(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	u := newUser(t, sb)
	k := newSigners(t, u)
	dir := t.TempDir()
	ca := signaturetest.NewKey(t, dir, "ca")
	alice := signaturetest.NewKey(t, dir, "alice")
	if out, err := exec.Command("ssh-keygen", "-q", "-s", ca.Path, "-I", "alice-corp", "-n", "alice@corp", "-V", "-1d:+30d", alice.Path+".pub").CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -s: %v: %s", err, out)
	}
	signaturetest.WriteAllowedSigners(t, k.allowed, alice.AllowedLine("alice"), "*@corp cert-authority "+ca.Public)
	if _, errOut, code := u.run("policy", "--approvals", "2"); code != 0 {
		t.Fatal(errOut)
	}
	file := filepath.Join(u.dir, "nov.csv")
	copyFile(t, samplePath(t), file)
	u.signPlan(t, alice, "nov.csv", file+".alice.sig")
	u.signPlan(t, signaturetest.Key{Path: alice.Path + "-cert.pub"}, "nov.csv", file+".corp.sig")
	expectExit5(t, u, "needs 2 distinct signers; have 1", "run", "nov.csv")
	if n := sb.Stats().Creates; n != 0 {
		t.Errorf("service created %d payouts on one person's signatures", n)
	}
}

// TestAuditPackRefusesAMemberPathOutsideIt: payout never writes a member whose name leads out of
// the folder a pack is unpacked in; a pack holding one, with SHA256SUMS written again, is not
// called intact.
func TestAuditPackRefusesAMemberPathOutsideIt(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	sb := newSandbox(t)
	u := newUser(t, sb)
	runID, _ := paidRun(t, u, samplePath(t))
	_, members := exportPack(t, u, runID, "run.zip")
	for _, name := range []string{"../../evil.sh", "/etc/cron.d/evil", `reports\..\..\evil.sh`} {
		forged := map[string][]byte{name: []byte("echo pwned\n")}
		for n, data := range members {
			forged[n] = data
		}
		path := filepath.Join(u.dir, "forged.zip")
		writeZipWithSums(t, path, forged)
		out, errOut, code := u.run("audit", "verify", "--pack", path)
		if code != 4 || !strings.Contains(out+errOut, "member "+strconv.Quote(name)) || strings.Contains(out, "intact") {
			t.Errorf("verify of a pack holding %s: exit %d, want 4 naming it\n%s%s", name, code, out, errOut)
		}
	}
}

// TestCommandRefusalOutlastsItsFiles: anyone who may write the folder can delete a refusal's two
// files; the first run that met the refusal recorded it, so the refused file still pays nothing
// once they are gone, and the trail holds the refusal.
func TestCommandRefusalOutlastsItsFiles(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	sb := newSandbox(t)
	u := newUser(t, sb)
	k := newSigners(t, u)
	if _, errOut, code := u.run("policy", "--approvals", "1"); code != 0 {
		t.Fatal(errOut)
	}
	file := filepath.Join(u.dir, "nov.csv")
	copyFile(t, samplePath(t), file)
	if out, errOut, code := u.run("reject", "--key", k.bob.Path, "--reason", "wrong month", "nov.csv"); code != 0 {
		t.Fatalf("reject: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := u.run("approve", "--key", k.alice.Path, "nov.csv"); code != 0 {
		t.Fatalf("approve: exit %d\n%s%s", code, out, errOut)
	}
	expectExit5(t, u, "REJECTED by bob,mallory: wrong month", "run", "--dry-run", "nov.csv")
	expectExit5(t, u, "REJECTED by bob,mallory: wrong month", "run", "nov.csv")
	refusals, _ := filepath.Glob(file + ".*.reject*")
	if len(refusals) != 2 {
		t.Fatalf("refusal files: %v", refusals)
	}
	for _, f := range refusals {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	expectExit5(t, u, "REJECTED by bob,mallory: wrong month (recorded by event", "run", "nov.csv")
	if n := sb.Stats().Creates; n != 0 {
		t.Errorf("service created %d payouts of a refused file", n)
	}
	if out, errOut, code := u.run("audit", "verify"); code != 0 {
		t.Fatalf("audit verify: exit %d\n%s%s", code, out, errOut)
	}
	// Another version of the file is a new plan: its signature pays it.
	data, _ := os.ReadFile(file)
	if err := os.WriteFile(file, append(data, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := u.run("approve", "--key", k.alice.Path, "nov.csv"); code != 0 {
		t.Fatalf("approve: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := u.run("run", "nov.csv"); code != 0 {
		t.Fatalf("run of the corrected file: exit %d\n%s%s", code, out, errOut)
	}
}
