package approval_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/batch/signature"
	"github.com/payout/payout/batch/signature/signaturetest"
)

// Files named like signatures that are none (a FIFO, a folder, 64 KiB, a link to nothing, a
// link to /dev/zero) are each named and ignored; the two valid signatures beside them count.
func TestJudgeIgnoresJunkBesideValidSignatures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	alice, bob := signaturetest.NewKey(t, dir, "alice"), signaturetest.NewKey(t, dir, "bob")
	pol := approval.Policy{AllowedSigners: signaturetest.WriteAllowedSigners(t, filepath.Join(dir, "allowed_signers"),
		alice.AllowedLine("alice"), bob.AllowedLine("bob"))}
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	plan := planOf("aaaa")
	statement, _ := io.ReadAll(plan.Statement(now.Add(approval.DefaultValidity).UTC().Truncate(24 * time.Hour)))
	input := filepath.Join(dir, "nov.csv")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(input, []byte("ref\n"), 0o600))
	must(os.WriteFile(input+".alice.sig", signaturetest.Sign(t, alice, signature.NamespacePlan, statement), 0o600))
	must(os.WriteFile(input+".bob.sig", signaturetest.Sign(t, bob, signature.NamespacePlan, statement), 0o600))
	must(syscall.Mkfifo(input+".fifo.sig", 0o600))
	must(os.Mkdir(input+".folder.sig", 0o700))
	must(os.WriteFile(input+".big.sig", bytes.Repeat([]byte("x"), 64<<10), 0o600))
	must(os.Symlink(filepath.Join(dir, "nowhere"), input+".dangling.sig"))
	must(os.Symlink("/dev/zero", input+".zero.sig"))

	v := approval.Judge(input, plan, 2, pol, now)
	if v.Missing() != "" || v.ApprovedBy() != "alice, bob" {
		t.Fatalf("junk beside two valid signatures: missing %q, approved by %q", v.Missing(), v.ApprovedBy())
	}
	want := map[string]string{"fifo": "a named pipe (FIFO), not a regular file", "folder": "a folder, not a regular file",
		"big": "64 KiB or more", "dangling": "a link to nothing", "zero": "a device, not a regular file"}
	if len(v.Ignored) != len(want) {
		t.Errorf("ignored %q, want the %d junk files", v.Ignored, len(want))
	}
	for name, why := range want {
		found := false
		for _, line := range v.Ignored {
			found = found || strings.HasPrefix(line, "nov.csv."+name+".sig: ") && strings.Contains(line, why)
		}
		if !found {
			t.Errorf("ignored %q does not name nov.csv.%s.sig saying %q", v.Ignored, name, why)
		}
	}
}
