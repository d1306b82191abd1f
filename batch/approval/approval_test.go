package approval_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/batch/signature"
	"github.com/payout/payout/batch/signature/signaturetest"
)

// planOf is a plan whose statement names its file's digest and valid-until day.
func planOf(fileSHA string) approval.Plan {
	return approval.Plan{FileSHA256: fileSHA, Digest: "digest-of-" + fileSHA, Statement: func(day time.Time) io.Reader {
		return strings.NewReader("payout-plan v1\nfile-sha256\t" + fileSHA + "\nvalid-until\t" + day.Format(time.DateOnly) + "\n")
	}}
}

// The judge counts signatures of the plan by distinct people, names what does not count and
// why, and a valid refusal of the plan blocks it whatever the signatures.
func TestJudge(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	alice, bob, mallory := signaturetest.NewKey(t, dir, "alice"), signaturetest.NewKey(t, dir, "bob"), signaturetest.NewKey(t, dir, "mallory")
	pol := approval.Policy{AllowedSigners: signaturetest.WriteAllowedSigners(t, filepath.Join(dir, "allowed_signers"),
		alice.AllowedLine("alice@example.com"), bob.AllowedLine("bob@example.com"))}
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	plan := planOf("aaaa")
	read := func(r io.Reader) []byte { b, _ := io.ReadAll(r); return b }
	validUntil := now.Add(approval.DefaultValidity).UTC().Truncate(24 * time.Hour)
	input := filepath.Join(dir, "nov.csv")
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("nov.csv", []byte("ref\n"))
	write("nov.csv.alice.sig", signaturetest.Sign(t, alice, signature.NamespacePlan, read(plan.Statement(validUntil))))
	write("nov.csv.mallory.sig", signaturetest.Sign(t, mallory, signature.NamespacePlan, read(plan.Statement(validUntil))))
	write("nov.csv.other.sig", signaturetest.Sign(t, bob, signature.NamespacePlan, read(planOf("bbbb").Statement(validUntil))))

	v := approval.Judge(input, plan, 2, pol, now)
	if len(v.Accepted) != 1 || v.ApprovedBy() != "alice@example.com" || len(v.NotCounted) != 2 {
		t.Fatalf("verdict %+v: want alice's accepted, mallory's and the other plan's not counted", v)
	}
	if why := v.Missing(); !strings.Contains(why, "needs 2 distinct signers; have 1: alice@example.com") || !strings.Contains(why, "not counted") {
		t.Errorf("missing %q", why)
	}
	write("nov.csv.bob.sig", signaturetest.Sign(t, bob, signature.NamespacePlan, read(plan.Statement(validUntil))))
	if v := approval.Judge(input, plan, 2, pol, now); v.Missing() != "" || len(v.Signers) != 2 {
		t.Errorf("two distinct signers: missing %q, signers %v", v.Missing(), v.Signers)
	}
	if v := approval.Judge(input, plan, 2, pol, now.Add(10*24*time.Hour)); len(v.Accepted) != 0 || !strings.Contains(v.Missing(), "EXPIRED") {
		t.Errorf("ten days later: %+v, want every signature expired", v)
	}
	statement := approval.RefusalStatement(plan, "wrong month")
	write("nov.csv.bob"+approval.RefusalSuffix, statement)
	write("nov.csv.bob"+approval.RefusalSuffix+approval.SigSuffix, signaturetest.Sign(t, bob, signature.NamespaceReject, statement))
	if v := approval.Judge(input, plan, 2, pol, now); !strings.HasPrefix(v.Missing(), "REJECTED by bob@example.com: wrong month") {
		t.Errorf("refused: missing %q", v.Missing())
	}
	if v := approval.Judge(input, plan, 1, approval.Policy{}, now); !strings.Contains(v.Missing(), approval.EnvAllowedSigners) {
		t.Errorf("no allowed signers: missing %q", v.Missing())
	}
	if !bytes.Contains(statement, []byte("plan-sha256\tdigest-of-aaaa")) {
		t.Errorf("refusal statement %q does not name the plan", statement)
	}
}

func TestValidityText(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		approval.DefaultValidity: "7 days",
		24 * time.Hour:           "1 day",
		36 * time.Hour:           "36h",
		90 * time.Minute:         "1h30m",
		0:                        "0s",
	} {
		if got := approval.ValidityText(d); got != want {
			t.Errorf("ValidityText(%v) = %q, want %q", d, got, want)
		}
	}
}
