package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A signer on her own laptop has the file and a provider list the service account saved, but no
// merchant token and no ledger: her plan is the run's to the byte, her signature pays the file,
// and nothing she does can reach the service.
func TestSignerWithoutTheMerchantTokenSignsWhatTheRunPays(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	sb := newSandbox(t)
	svc := newUser(t, sb)
	k := newSigners(t, svc)
	if _, errOut, code := svc.run("policy", "--approvals", "1"); code != 0 {
		t.Fatalf("policy: exit %d: %s", code, errOut)
	}
	file := filepath.Join(svc.dir, "payroll.csv")
	copyFile(t, samplePath(t), file)
	list, errOut, code := svc.run("providers", "--json")
	if code != 0 {
		t.Fatalf("providers --json: exit %d: %s", code, errOut)
	}
	want, _, code := svc.run("plan", "payroll.csv")
	if code != 0 {
		t.Fatal("the service account's plan failed")
	}

	laptop := &user{tb: t, dir: t.TempDir(), env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(),
		"PAYOUT_ALLOWED_SIGNERS=" + k.allowed}}
	copyFile(t, file, filepath.Join(laptop.dir, "payroll.csv"))
	if err := os.WriteFile(filepath.Join(laptop.dir, "providers.json"), []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := laptop.run("plan", "payroll.csv"); code != 2 || !strings.Contains(errOut, "PAYOUT_BASE_URL") {
		t.Errorf("plan without a service or --providers: exit %d, want 2 naming PAYOUT_BASE_URL: %s", code, errOut)
	}
	got, errOut, code := laptop.run("plan", "--providers", "providers.json", "payroll.csv")
	if code != 0 || got != want {
		t.Fatalf("plan --providers: exit %d, %s\nthe laptop's plan differs from the service account's:\n%s\nwant\n%s", code, errOut, got, want)
	}
	if out, errOut, code := laptop.run("approve", "--providers", "providers.json", "--key", k.alice.Path, "payroll.csv"); code != 0 || !strings.Contains(out, "SIGNED by alice") {
		t.Fatalf("approve --providers: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(laptop.dir, "payout-ledger.db")); !os.IsNotExist(err) {
		t.Errorf("signing made a ledger on the laptop: %v", err)
	}
	copyFile(t, filepath.Join(laptop.dir, "payroll.csv.alice.sig"), file+".alice.sig")
	if out, errOut, code := svc.run("run", "--json", "payroll.csv"); code != 0 || !strings.Contains(out, `"approved_by":"alice"`) {
		t.Fatalf("run with the laptop's signature: exit %d\n%s%s", code, out, errOut)
	}

	if err := os.WriteFile(filepath.Join(laptop.dir, "bad.json"), []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := laptop.run("plan", "--providers", "bad.json", "payroll.csv"); code != 2 || !strings.Contains(errOut, "payout providers --json") {
		t.Errorf("plan with an empty provider list: exit %d, want 2 saying what to give: %s", code, errOut)
	}
}
